// "1 plugin", "2 plugins": counts in messages read as English.
export function plural(count: number, noun: string, nouns = `${noun}s`): string {
  return `${count} ${count === 1 ? noun : nouns}`;
}
