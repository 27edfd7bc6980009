/**
 * A GPU device of its own for each group of tests (a describe block), destroyed after it: a software GPU compiles more
 * slowly the more one device has compiled (docs/ci.md), and each group compiles one or two pipelines. Without a GPU the
 * tests skip with the reason, unless FA_REQUIRE_GPU=1 asks for one.
 */
import { afterAll, beforeAll } from 'vitest';
import { acquireNodeGpu } from '@fa/core/node';
export function deviceForGroup() {
    let gpu;
    let missing = '';
    beforeAll(async () => {
        const acquired = await acquireNodeGpu();
        gpu = acquired.gpu;
        if (!gpu) {
            missing = acquired.reason ?? 'no GPU adapter';
            if (process.env.FA_REQUIRE_GPU === '1')
                throw new Error(`FA_REQUIRE_GPU=1 but ${missing}`);
        }
    });
    afterAll(() => {
        gpu?.destroy();
    });
    return { gpu: () => gpu, missing: () => missing };
}
//# sourceMappingURL=device-for-group.js.map