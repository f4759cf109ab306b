// Writes and deletes files in the tenant's workspace through the host's workspace capability:
// the plugin names a path, the host keeps it inside the workspace folder. The operator's
// rules in the manifest stop system paths at the gate before the plugin even runs.
function summary(path, content) {
  const lines = content.split('\n');
  return { path, bytes: content.length, lines: lines.length, preview: lines.slice(0, 3).join('\n') };
}

export default {
  tools: [
    {
      name: 'write_file',
      description: 'Write a text file in the workspace (created or replaced). Returns what was written.',
      parameters: {
        type: 'object',
        properties: {
          path: { type: 'string', description: 'File path relative to the workspace, e.g. notes/todo.md' },
          content: { type: 'string', description: 'The full new content.' },
        },
        required: ['path', 'content'],
        additionalProperties: false,
      },
      async execute({ path, content }, ctx) {
        await ctx.capabilities['workspace.write']({ path, content });
        return { written: true, ...summary(path, content) };
      },
    },
    {
      name: 'delete_file',
      description: 'Delete a file from the workspace.',
      parameters: {
        type: 'object',
        properties: { path: { type: 'string', description: 'File path relative to the workspace' } },
        required: ['path'],
        additionalProperties: false,
      },
      async execute({ path }, ctx) {
        const { deleted } = await ctx.capabilities['workspace.delete']({ path });
        return { deleted, path };
      },
    },
  ],
};
