import { CONSOLE_ROLES, enrollOperatorConsole } from '@vrpkit/platform';
import { type Command, Option } from 'commander';
import { printJson, run } from '../../../io.js';
import { type PlatformOptions, platformOptions, withStore } from '../options.js';

/** `vrp platform console enroll --role operator|support`: print a one-time link that enrolls a passkey with that role. */
export function registerEnroll(console: Command): void {
  platformOptions(
    console
      .command('enroll')
      .description('print a one-time link (valid 15 minutes) that enrolls a passkey for the operator console')
      .addOption(
        new Option('--role <role>', 'operator (may change tenants) or support (reads only)')
          .choices([...CONSOLE_ROLES])
          .makeOptionMandatory(),
      ),
  ).action((o: PlatformOptions & { role: string }) =>
    run(o.json, async () => {
      const e = await withStore(o, (s) => enrollOperatorConsole(s, o.role));
      if (o.json) printJson(e);
      else
        process.stdout.write(
          `${e.complete ? 'open this link' : 'open this path on the operator console'} once, before ${e.expires_at}, to enroll a passkey with the ${e.role} role:\n  ${e.link}\n`,
        );
    }),
  );
}
