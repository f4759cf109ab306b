// The screen after a fetch answer's redaction: a secret still in it, however nested or
// wrapped, is found; an answer without one is not refused by chance.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { echoesSecret } from '../src/capabilities/secret-echo-screen.js';

const SECRET = 'sk_live/AbC+dEf=gH1jK2lM3nO4pQ5==';
const b64 = (text: string): string => Buffer.from(text).toString('base64');

describe('secret echo screen', () => {
  it.each([
    ['JSON inside a JSON string, .NET-escaped', JSON.stringify({ log: JSON.stringify(`Bearer ${SECRET}`).replace(/\+/g, '\\u002B') })],
    ['base64 of a dump, wrapped every 60 characters', (b64(JSON.stringify({ authorization: `Bearer ${SECRET}` })).match(/.{1,60}/g) ?? []).join('\n')],
    ['base64 of PHP JSON (/ as \\/)', b64(JSON.stringify({ auth: SECRET }).replace(/\//g, '\\/'))],
    ['base64 inside base64', b64(b64(`Bearer ${SECRET}`))],
    ['UTF-16 read as UTF-8', Buffer.from(SECRET, 'utf16le').toString('utf8')],
    ['quoted-printable', SECRET.replace(/=/g, '=3D')],
    ['percent-encoded twice', encodeURIComponent(encodeURIComponent(SECRET))],
    ['HTML of JSON', JSON.stringify(SECRET).replace(/&/g, '&amp;').replace(/\+/g, '&#x2B;')],
    ['another case', SECRET.toUpperCase()],
    // PHP's and Rack's cookie parsers decode "+" as a space (an outside attacker's find).
    ['a form decoder\'s reading, "+" as a space', `session => ${SECRET.replace(/\+/g, ' ')}`],
    // A renderer lets a long word wrap with invisible breaks.
    ['broken by soft hyphens', SECRET.replace(/(.{4})/g, '$1\u00ad')],
    ['broken by &shy;', SECRET.replace(/(.{4})/g, '$1&shy;')],
    ['broken by <wbr>', SECRET.replace(/(.{5})/g, '$1<wbr>')],
    ['broken by zero-width spaces', SECRET.replace(/(.{3})/g, '$1\u200b')],
    // Quoted-printable wrapped inside the key (Python's email package at 76 columns).
    ['a quoted-printable soft break inside it', `x-api-key: Bearer ${SECRET.slice(0, 20).replace(/=/g, '=3D')}=\n${SECRET.slice(20).replace(/=/g, '=3D')}`],
    ['a soft break with CRLF', `${SECRET.slice(0, 22)}=\r\n${SECRET.slice(22)}`],
    ['a backslash line continuation inside it', `${SECRET.slice(0, 25)}\\\n${SECRET.slice(25)}`],
    ['markup around part of it', `${SECRET.slice(0, 10)}<mark class="hit">${SECRET.slice(10, 20)}</mark>${SECRET.slice(20)}`],
  ])('finds %s', (_, text) => {
    expect(echoesSecret([text], [SECRET])).toBe(true);
  });

  it('finds nothing in an answer without the secret, base64 and escapes included', () => {
    const texts = [randomBytes(96 * 1024).toString('base64'), '<p>lorem &amp; ipsum &#43; %2B \\u0041</p>\n'.repeat(500), `sk_live/AbC+dEf=gH1jK2lM3nO4pQ5`, '[REDACTED]'];
    expect(echoesSecret(texts, [SECRET])).toBe(false);
  });

  it('does not screen values shorter than 8 characters: decoded text would hold them by chance', () => {
    expect(echoesSecret([b64('abc12')], ['abc12'])).toBe(false);
    expect(echoesSecret([b64('abcd1234')], ['abcd1234'])).toBe(true);
  });
});
