/**
 * The conformance suite (conformance-suite.ts) on the cases of head sizes up to 32; the larger ones run beside it
 * (large-heads.conformance.test.ts). `npm run test:conformance` runs both.
 */
import { CONFORMANCE_CASES } from '../src/index.js';
import { describeConformance } from './conformance-suite.js';

describeConformance(CONFORMANCE_CASES.filter((c) => c.shape.d <= 32));
