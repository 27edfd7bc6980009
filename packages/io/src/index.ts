/**
 * @fa/io: the hw4 format on ArrayBuffers and typed arrays, for Node and browsers alike (shape, header, statistics,
 * generator, comparator, chunks). Reading and writing files is in '@fa/io/node'.
 */
export * from './shape.js';
export * from './errors.js';
export * from './header.js';
export * from './finite.js';
export * from './chunks.js';
export * from './stats.js';
export * from './prng.js';
export * from './generate.js';
export * from './compare.js';
export * from './npy.js';
