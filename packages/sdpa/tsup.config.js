import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.shared.js';
export default defineConfig(packageBuild({ index: 'src/index.ts' }));
//# sourceMappingURL=tsup.config.js.map