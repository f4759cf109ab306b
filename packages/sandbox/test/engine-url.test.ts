// A NATS URL with credentials is shown, in every message, with them masked: whatever stands
// between "://" and "@", however it is spelled, even when no URL parser takes it.
import { describe, expect, it } from 'vitest';
import { engineServers, shownEngineUrl } from '../src/remote/connect-engine.js';

const refusal = (url: string): string => {
  try {
    engineServers(url, '--connect');
    return 'accepted';
  } catch (error) {
    return (error as Error).message;
  }
};

describe('engine URLs and their credentials', () => {
  it.each([
    ['nats://alice:s3cret@127.0.0.1:4222', 'nats://***@127.0.0.1:4222'],
    ['nats://t0ken@127.0.0.1:4222', 'nats://***@127.0.0.1:4222'],
    ['nats://a:b@h1:4222,nats://c:d@h2:4222', 'nats://***@h1:4222,nats://***@h2:4222'],
    ['nats://127.0.0.1:4222', 'nats://127.0.0.1:4222'],
  ])('%s is shown as %s', (url, shown) => {
    expect(shownEngineUrl(url)).toBe(shown);
  });

  it.each([
    'nats://alice:s3cr#SECRET@127.0.0.1:4222',
    'nats://tok/en+SECRET==@127.0.0.1:4222',
    'nat://alice:SECRET@127.0.0.1:4222',
    'nats://alice:SECRET@',
    'nats://alice:SECRET@:4222',
  ])('a URL that is refused is never quoted with its secret: %s', (url) => {
    const message = refusal(url);
    expect(message).not.toBe('accepted');
    expect(message).not.toContain('SECRET');
  });

  it('a comma inside a password does not split the list there', () => {
    expect(engineServers('nats://alice:pa,SECRETTAIL@127.0.0.1:4222', '--connect')).toEqual(['nats://alice:pa,SECRETTAIL@127.0.0.1:4222']);
  });
});
