// A key given twice in one object of a manifest: JSON.parse keeps only the last, so a person
// reading the file can see one value ("default": "deny") while another is in force ("default":
// "allow", further down). The manifest is what a reviewer approves; it must read as it runs.

interface Frame {
  /** The object's keys so far; undefined for an array. */
  readonly keys: Set<string> | undefined;
  readonly path: string;
  /** The key whose value comes next, or the array index. */
  key: string;
  index: number;
  expectingKey: boolean;
}

/** The path of every key repeated within its object (`permissions.default`), in order; `text` must be valid JSON. */
export function repeatedKeys(text: string): string[] {
  const repeated: string[] = [];
  const stack: Frame[] = [];
  const childPath = (): string => {
    const top = stack.at(-1);
    if (top === undefined) return '';
    if (top.keys === undefined) return `${top.path}[${top.index}]`;
    return top.path === '' ? top.key : `${top.path}.${top.key}`;
  };
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i];
    if (char === '"') {
      const start = i;
      for (i += 1; text[i] !== '"'; i += 1) if (text[i] === '\\') i += 1;
      const top = stack.at(-1);
      if (top?.keys !== undefined && top.expectingKey) {
        const key = JSON.parse(text.slice(start, i + 1)) as string;
        top.key = key;
        top.expectingKey = false;
        if (top.keys.has(key)) repeated.push(childPath());
        else top.keys.add(key);
      }
    } else if (char === '{' || char === '[') {
      stack.push({ keys: char === '{' ? new Set() : undefined, path: childPath(), key: '', index: 0, expectingKey: char === '{' });
    } else if (char === '}' || char === ']') {
      stack.pop();
    } else if (char === ',') {
      const top = stack.at(-1);
      if (top?.keys === undefined) {
        if (top !== undefined) top.index += 1;
      } else top.expectingKey = true;
    }
  }
  return repeated;
}
