// Stages changes instead of touching a disk: the host applies what a person approves.
function summary(path, content) {
  const lines = content.split('\n');
  return { path, bytes: content.length, lines: lines.length, preview: lines.slice(0, 3).join('\n') };
}

export default {
  tools: [
    {
      name: 'write_file',
      description: 'Stage a write of a text file in the workspace. Returns what would be written.',
      parameters: {
        type: 'object',
        properties: {
          path: { type: 'string', description: 'File path, e.g. notes/todo.md' },
          content: { type: 'string', description: 'The full new content.' },
        },
        required: ['path', 'content'],
        additionalProperties: false,
      },
      execute({ path, content }) {
        return { staged: 'write', ...summary(path, content) };
      },
    },
    {
      name: 'delete_file',
      description: 'Stage the deletion of a file in the workspace.',
      parameters: {
        type: 'object',
        properties: { path: { type: 'string' } },
        required: ['path'],
        additionalProperties: false,
      },
      execute({ path }) {
        return { staged: 'delete', path };
      },
    },
  ],
};
