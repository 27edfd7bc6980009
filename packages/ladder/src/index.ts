export * from './ladder.js';
export * from './cases.js';
export * from './conformance.js';
export * from './choice.js';
export { CHOICE_TABLE } from './choice-table.js';
export * from './tree.js';
export { fitSlope, scalingSvg, segmentSlopes, type SweepSeries, type SweepSlope } from './scaling-chart.js';
