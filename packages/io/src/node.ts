/**
 * @fa/io/node: everything of '@fa/io' plus the file system: the validated streaming reader (files and standard
 * input), the atomic writer, output targets and the one-line I/O errors.
 */
export * from './index.js';
export * from './read.js';
export * from './read-output.js';
export * from './write.js';
export * from './output-target.js';
export { ioError } from './io-error.js';
export { stdinSource, type ByteSource } from './read-floats.js';
