/**
 * A package's error codes as data (jose `util/errors.ts`; the gate's EF registry): one table per
 * package, each code with its message template and, where one applies, the HTTP status or the
 * exit status it maps to. A throw site names a code and the values its template asks for
 * (`{name}` placeholders, typed from the template itself), so a code reads the same wherever it
 * is raised and the table lists every code the package's users can see.
 */
import { VrpError } from './errors.js';

export interface CodeEntry {
  /** The message, with `{name}` placeholders for the values a throw site supplies. */
  readonly message: string;
  /** The HTTP status an answer carrying this code has, where one applies. */
  readonly status?: number;
  /** The process exit status a command reporting this code ends with, where one applies. */
  readonly exit?: number;
  /** The template values that are also the error's structured `details` (scripts read them without parsing the message). */
  readonly details?: readonly string[];
}

export type CodeTable = Readonly<Record<string, CodeEntry>>;

/** The `{name}` placeholders of a message template. */
export type Placeholders<T extends string> = T extends `${string}{${infer P}}${infer Rest}` ? P | Placeholders<Rest> : never;

/** The values a template asks for. */
export type MessageParams<T extends string> = { readonly [K in Placeholders<T>]: string | number };

export interface RaiseOptions {
  /** Structured details (never raw tool arguments or key material). */
  details?: Record<string, unknown>;
  cause?: unknown;
}

/** What raises one code of `T`: the code, its template's values (none for a template without placeholders), options. */
export type CodeArgs<T extends CodeTable> = {
  [C in keyof T & string]: [Placeholders<T[C]['message']>] extends [never]
    ? [code: C, params?: undefined, options?: RaiseOptions]
    : [code: C, params: MessageParams<T[C]['message']>, options?: RaiseOptions];
}[keyof T & string];

/** Fill a template's `{name}` placeholders; a placeholder without a value stays as written. */
export function formatMessage(template: string, params: Readonly<Record<string, string | number>> = {}): string {
  return template.replace(/\{([A-Za-z_]\w*)\}/g, (whole, name: string) => (Object.hasOwn(params, name) ? String(params[name]) : whole));
}

/**
 * The base of a package's error class: `code` is one of its table's codes and the message is the
 * table's template filled in. A package declares `class XError extends CodedError<typeof X_CODES>`
 * with a constructor that passes its table.
 */
export class CodedError<T extends CodeTable> extends VrpError {
  declare readonly code: keyof T & string;
  protected constructor(table: T, [code, params, options]: CodeArgs<T>) {
    // A code outside the table is a type error at the throw site; a cast past it still names its code.
    const entry = table[code] as CodeEntry | undefined;
    const carried = entry?.details?.filter((k) => params !== undefined && Object.hasOwn(params, k));
    const details = carried?.length
      ? { ...Object.fromEntries(carried.map((k) => [k, (params as Record<string, unknown>)[k]])), ...options?.details }
      : options?.details;
    super(
      code,
      formatMessage(entry?.message ?? code, params),
      details,
      options && 'cause' in options ? { cause: options.cause } : undefined,
    );
  }
}

/**
 * The error class of one code table, for a package whose class adds nothing of its own:
 * `class XError extends codedErrorClass(X_CODES) {}` (its constructor takes `CodeArgs` of the table).
 */
export function codedErrorClass<T extends CodeTable>(table: T) {
  return class extends CodedError<T> {
    constructor(...args: CodeArgs<T>) {
      super(table, args);
    }
  };
}
