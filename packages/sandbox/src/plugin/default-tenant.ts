// The tenant of a call that names none (and of work no tenant owns, such as loading a plugin):
// one name, so such calls share isolates with each other and with no named tenant. Core's
// policy matches such calls under the same name.
export { DEFAULT_TENANT } from '@airlock/core';
