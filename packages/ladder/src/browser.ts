/**
 * @fa/ladder/browser: the ladder for a web page. The same table as the main entry (ladder.ts's RUNGS, so a rung added
 * there appears here too), built with '@fa/reference/node' replaced by browser-cpu.ts: the `cpu` rung declines with
 * the reason. Also the conformance verdict, so a page judges a rung's error as the conformance suite does.
 */
export { LADDER, findRung } from './ladder.js';
export * from './cases.js';
export * from './conformance.js';
export * from './tree.js';
export { fitSlope, scalingSvg, segmentSlopes, type SweepSeries, type SweepSlope } from './scaling-chart.js';
