// The redaction of a fetch answer: a sent value is replaced however a server spells it back.
import { describe, expect, it } from 'vitest';
import { secretScrubber } from '../src/capabilities/secret-redaction.js';

describe('secret redaction', () => {
  const secret = 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY';
  const scrub = secretScrubber([{ value: secret, header: `session=${secret}` }], '');

  it('replaces a value whose "+" a form decoder read as a space (PHP\'s and Rack\'s cookies)', () => {
    expect(scrub(`{"session":"${secret.replace('+', ' ')}"}`)).toBe('{"session":"[REDACTED]"}');
  });

  it('replaces a value whose space was written as "+" (form encoding), and leaves other text alone', () => {
    const spaced = secretScrubber([{ value: 'tok with space', header: 'tok with space' }], '');
    expect(spaced('a=tok+with+space&b=tok with spice')).toBe('a=[REDACTED]&b=tok with spice');
  });
});
