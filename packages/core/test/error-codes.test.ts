import { type CodeArgs, CodedError, formatMessage, isVrpError } from '@vrpkit/core';
import { describe, expect, it } from 'vitest';

const TABLE = {
  unknown_thing: { status: 404, message: 'no thing {name} in {place}', details: ['name'] },
  fixed: { exit: 64, message: 'a message without values' },
} as const;

class ThingError extends CodedError<typeof TABLE> {
  constructor(...args: CodeArgs<typeof TABLE>) {
    super(TABLE, args);
  }
}

describe('code tables', () => {
  it('fills every placeholder from the values and leaves an unknown one as written', () => {
    expect(formatMessage('no thing {name} in {place}', { name: 'a', place: 3 })).toBe('no thing a in 3');
    expect(formatMessage('no thing {name}', {})).toBe('no thing {name}');
    expect(formatMessage('{a}{a}', { a: '$&' })).toBe('$&$&');
  });

  it('raises a code with the table message, its details and its cause', () => {
    const cause = new Error('inner');
    const e = new ThingError('unknown_thing', { name: 'x', place: 'y' }, { details: { extra: 1 }, cause });
    expect(isVrpError(e)).toBe(true);
    expect(e).toBeInstanceOf(ThingError);
    expect(e.name).toBe('ThingError');
    expect(e.toJSON()).toEqual({ code: 'unknown_thing', message: 'no thing x in y', details: { name: 'x', extra: 1 } });
    expect(e.cause).toBe(cause);
    expect(new ThingError('fixed').toJSON()).toEqual({ code: 'fixed', message: 'a message without values' });
    expect('cause' in new ThingError('fixed')).toBe(false);
  });

  it('types the values each code asks for', () => {
    // @ts-expect-error the template asks for name and place
    expect(new ThingError('unknown_thing', { name: 'x' }).message).toBe('no thing x in {place}');
    // @ts-expect-error not a code of the table (a cast past the types still names its code)
    expect(new ThingError('other').message).toBe('other');
    // @ts-expect-error a template without placeholders takes no values
    expect(new ThingError('fixed', { name: 'x' }).message).toBe('a message without values');
  });
});
