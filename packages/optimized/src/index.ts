// The optimized rungs, one folder each (NN-id/{id.wgsl, id.ts}); their order on the ladder is the ladder table's.
