/** The takeback sidecar protocol: wire shapes, methods, commands and error codes. */
export * from './types.js';
export * from './selector.js';
export * from './methods.js';
export * from './commands.js';
export * from './errors.js';
export * from './initialize.js';
