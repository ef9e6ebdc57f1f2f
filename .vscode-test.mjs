// @vscode/test-cli configuration for machines that can download VS Code
// (`npm run test:vscode`). Here, where no download is possible, the end-to-end suite runs
// on code-server instead: npm run test:e2e.
import { defineConfig } from '@vscode/test-cli';

export default defineConfig({
    files: 'out/vscode/**/*.test.js',
    workspaceFolder: './examples',
    version: 'stable',
    mocha: { timeout: 20000 },
});
