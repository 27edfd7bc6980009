import { type CaseCheck } from '../src/conformance.js';
export interface CaseResult extends Partial<CaseCheck> {
    name: string;
    dtype: 'f32' | 'f16';
    /** Why the case did not run or failed to run. */
    problem?: string;
}
export interface BrowserResult {
    adapter: string;
    cases: CaseResult[];
}
