// Integration tests inside a downloaded VS Code (@vscode/test-cli: `npm run test:vscode`), for
// machines that can download it. This machine cannot: the code-server suite (tests/extension/e2e)
// covers the same ground through the UI.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import * as vscode from 'vscode';

const EXAMPLES = path.resolve(__dirname, '../../examples');

async function activate(): Promise<void> {
    const ext = vscode.extensions.getExtension('rankdebug.rankdebug');
    assert.ok(ext, 'the extension is installed');
    await ext.activate();
}

describe('Rank Debugger in VS Code', function () {
    this.timeout(120000);

    before(activate);

    it('registers its commands and the rankdebug debug type', async () => {
        const commands = await vscode.commands.getCommands(true);
        for (const id of ['rankdebug.debugCommand', 'rankdebug.pickRanks', 'rankdebug.debugLastCommand', 'rankdebug.generateLaunchJson', 'rankdebug.jobs.attach']) {
            assert.ok(commands.includes(id), id);
        }
    });

    it('registers the group commands of a job debugged together, and Bind Breakpoint to Ranks', async () => {
        const commands = await vscode.commands.getCommands(true);
        const ids = [
            'rankdebug.ranks.continue',
            'rankdebug.ranks.pause',
            'rankdebug.ranks.stepOver',
            'rankdebug.ranks.stepInto',
            'rankdebug.ranks.stepOut',
            'rankdebug.ranks.runToCursor',
            'rankdebug.ranks.stopTogether',
            'rankdebug.ranks.stopAlone',
            'rankdebug.ranks.makeGroup',
            'rankdebug.ranks.chooseGroup',
            'rankdebug.jobs.filter',
            'rankdebug.jobs.clearFilter',
            'rankdebug.bindBreakpoint',
            'rankdebug.compareAcrossRanks',
            'rankdebug.compareExpression',
        ];
        assert.deepEqual(ids.filter((id) => !commands.includes(id)), []);
        assert.equal(vscode.workspace.getConfiguration('rankdebug').get('stopRanks'), 'together');
    });

    it('shows code lenses above the launch command of train.sh', async () => {
        const doc = await vscode.workspace.openTextDocument(path.join(EXAMPLES, 'train.sh'));
        await vscode.window.showTextDocument(doc);
        const line = doc.getText().split('\n').findIndex((l) => l.startsWith('torchrun'));
        let lenses: vscode.CodeLens[] = [];
        for (let i = 0; i < 120 && !lenses.length; i++) {
            lenses = (await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', doc.uri)) ?? [];
            if (!lenses.length) await new Promise((r) => setTimeout(r, 500));
        }
        const debug = lenses.find((l) => l.command?.command === 'rankdebug.debugCommand');
        assert.ok(debug, 'a ▶ Debug lens');
        assert.equal(debug.range.start.line, line);
        assert.match(debug.command?.title ?? '', /2 ranks/);
    });
});
