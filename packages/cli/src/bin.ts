#!/usr/bin/env node
import { main } from './main.js';

// `npm run vrp -- …` runs this in the folder of the package.json that holds the script (the
// repository, or a workspace package); the paths on its command line are the user's, typed in
// the folder npm was started from, which npm passes as INIT_CWD (issue 36 friction).
if (process.env.npm_lifecycle_event === 'vrp' && process.env.INIT_CWD) process.chdir(process.env.INIT_CWD);

process.exitCode = await main(process.argv);
