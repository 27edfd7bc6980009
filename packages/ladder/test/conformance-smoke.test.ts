/**
 * Every rung once against the float64 oracle, in `npm test`: the conformance suite (conformance-suite.ts) on one
 * case, N a multiple of no tile and B > 1 at d = 16, the head size the software GPU compiles fastest. Every case at
 * every head size is `npm run test:conformance` (small-heads.conformance.test.ts, large-heads.conformance.test.ts).
 */
import { CONFORMANCE_CASES } from '../src/index.js';
import { describeConformance, SMOKE_CASE } from './conformance-suite.js';

const smoke = CONFORMANCE_CASES.filter((c) => c.name === SMOKE_CASE);
if (smoke.length !== 1) throw new Error(`no conformance case named ${SMOKE_CASE} in cases.ts`);
describeConformance(smoke, { planClasses: false });
