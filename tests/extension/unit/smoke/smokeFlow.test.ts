import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as vscode from 'vscode';
import { SmokeFlow } from '../../../../extension/src/smoke/smokeFlow';
import { FakeSmokeHost, fileUri, smokeServer } from './fakes';

/** `rankdebug smoke --json` for a two-change torchrun line with a config copy, in /w/sub. */
const ANSWER = {
    argv: ['torchrun', '--nproc_per_node', '2', 'train.py', '--max_steps', '3', '--deepspeed', '/tmp/copy/ds.json'],
    env: { WANDB_MODE: 'disabled' },
    changes: [
        { name: 'max_steps', from: null, to: 3, why: 'a few optimizer steps', where: '--max_steps' },
        { name: 'train_batch_size', from: 64, to: 2, why: 'one sample per rank', where: 'ds.json: train_batch_size' },
    ],
    files: ['/tmp/copy/ds.json'],
    copies: [{ from: '/w/ds.json', to: '/tmp/copy/ds.json' }],
    original: { argv: ['torchrun', '--nproc_per_node', '8', 'train.py', '--deepspeed', 'ds.json'], env: {} },
    notes: ['no save interval found'],
    missing: ['no step limit found: the run may be long'],
    plan: { cwd: '/w/sub' },
};

const SRC = { uri: fileUri('/w/scripts/train.sh'), line: 4 };

const mode = (p: string): number => fs.statSync(p).mode & 0o777;

describe('smoke/smokeFlow', () => {
    let storage: string;
    beforeEach(() => (storage = fs.mkdtempSync(path.join(os.tmpdir(), 'rankdebug smoke '))));
    afterEach(() => fs.rmSync(storage, { recursive: true, force: true }));

    function flow(answer: unknown = ANSWER): { host: FakeSmokeHost; smoke: SmokeFlow; asked: { command: string; arg: unknown }[]; script: string } {
        const host = new FakeSmokeHost();
        const { ctx, asked } = smokeServer(answer);
        const smoke = new SmokeFlow(host, { fsPath: storage } as vscode.Uri, ctx);
        return { host, smoke, asked, script: path.join(storage, 'smoke', 'train-L5.smoke.sh') };
    }

    it('saves the command, writes its smoke script 0600 in a 0700 folder and the command as written beside it, and opens the diffs', async () => {
        const { host, smoke, asked, script } = flow();
        host.source = SRC;
        await smoke.open(['file:///w/scripts/train.sh', 4]);
        assert.deepEqual(host.savedSources, [SRC]);
        assert.deepEqual(asked, [{ command: 'rankdebug.smoke', arg: { uri: 'file:///w/scripts/train.sh', line: 4 } }]);
        assert.equal(mode(path.join(storage, 'smoke')), 0o700);
        assert.equal(mode(script), 0o600);
        assert.deepEqual(fs.readdirSync(path.join(storage, 'smoke')), ['train-L5.smoke.sh']);
        const text = fs.readFileSync(script, 'utf8');
        assert.match(text, /^#!\/usr\/bin\/env bash\n# Smoke run of scripts\/train\.sh:5 \(rankdebug smoke\); your own files are unchanged\.\n/);
        assert.match(text, /\ncd \/w\/sub\nexport WANDB_MODE=disabled\ntorchrun \\\n {4}--nproc_per_node 2 \\\n/);
        assert.match(text, /# {3}config copy: \/tmp\/copy\/ds\.json \(from \/w\/ds\.json\)/);
        // The left side: the command as written, served read-only under its own scheme.
        assert.equal(host.content?.scheme, 'rankdebug-original');
        assert.deepEqual(host.content?.changed, ['rankdebug-original:/train-L5.sh']);
        const left = host.content?.text('/train-L5.sh') ?? '';
        assert.match(left, /^#!\/usr\/bin\/env bash\n# The command as written in scripts\/train\.sh:5\.\n\ncd \/w\/sub\ntorchrun \\\n {4}--nproc_per_node 8 \\\n/);
        assert.equal(host.content?.text('/other.sh'), '');
        assert.deepEqual(host.commands, [
            'vscode.diff file:///w/ds.json file:///tmp/copy/ds.json ds.json ↔ smoke copy {"preview":false}',
            `vscode.diff rankdebug-original:/train-L5.sh file://${script} Smoke run: scripts/train.sh:5 {"preview":false}`,
        ]);
        assert.deepEqual(host.asked, [
            { message: 'Smoke run of scripts/train.sh:5: 2 changes (see the diff). no step limit found: the run may be long no save interval found', buttons: ['Run', 'Debug'] },
        ]);
        assert.match(host.logged[0], /^smoke scripts\/train\.sh:5: 2 changes in \d+ ms$/);
        // Closed: nothing runs.
        assert.deepEqual(host.terminals, []);
        assert.deepEqual(host.debugged, []);
        assert.deepEqual(host.errors, []);
    });

    it('makes a folder that was open to others private again, and reloads the script when the editor has it unchanged', async () => {
        const { host, smoke, script } = flow();
        host.source = SRC;
        fs.mkdirSync(path.join(storage, 'smoke'), { mode: 0o755 });
        fs.chmodSync(path.join(storage, 'smoke'), 0o755);
        host.documents.set(`file://${script}`, { isDirty: false, saved: 0 });
        await smoke.open([]);
        assert.equal(mode(path.join(storage, 'smoke')), 0o700);
        assert.deepEqual(host.commands.slice(0, 2), [`workbench.action.files.revert file://${script}`, 'vscode.diff file:///w/ds.json file:///tmp/copy/ds.json ds.json ↔ smoke copy {"preview":false}']);
        // Edited in the editor: the user's edits are not thrown away.
        host.commands.length = 0;
        host.documents.set(`file://${script}`, { isDirty: true, saved: 0 });
        await smoke.open([]);
        assert.ok(!host.commands.some((c) => c.startsWith('workbench.action.files.revert')), host.commands.join('\n'));
        assert.equal(host.documents.get(`file://${script}`)?.saved, 0);
    });

    it("says the server's refusal with its line, and writes and opens nothing", async () => {
        const { host, smoke } = flow({ error: { message: 'no training command on this line', line: 5 } });
        host.source = SRC;
        await smoke.open([]);
        assert.deepEqual(host.errors, ['Rank Debugger: no training command on this line (line 5)']);
        assert.ok(!fs.existsSync(path.join(storage, 'smoke')));
        assert.deepEqual(host.commands, []);
        assert.deepEqual(host.asked, []);
        assert.equal(host.content?.changed.length, 0);
    });

    it('asks nothing when there is no command (the typed command cancelled)', async () => {
        const { host, smoke, asked } = flow();
        await smoke.open([]);
        assert.deepEqual(asked, []);
        assert.deepEqual(host.savedSources, []);
    });

    it('names a typed command as such, in its folder, and says when nothing was shrunk', async () => {
        const { host, smoke, asked } = flow({ ...ANSWER, changes: [], missing: [], notes: [], copies: [] });
        host.source = { text: 'torchrun --nproc_per_node 8 train.py', cwd: '/w' };
        await smoke.open([]);
        assert.deepEqual(asked[0].arg, { text: 'torchrun --nproc_per_node 8 train.py', language: 'shellscript', settings: { cwd: '/w' } });
        const script = path.join(storage, 'smoke', 'typed-command.smoke.sh');
        assert.equal(mode(script), 0o600);
        assert.match(fs.readFileSync(script, 'utf8'), /# Smoke run of the typed command .*\n(.*\n){2}# {3}nothing to shrink was found\n/);
        assert.deepEqual(host.commands, [`vscode.diff rankdebug-original:/typed-command.sh file://${script} Smoke run: the typed command {"preview":false}`]);
        assert.deepEqual(host.asked[0].message, 'Smoke run of the typed command: nothing to shrink was found.');
    });

    it('Run: the script in a terminal of its own, the path quoted for the shell', async () => {
        const { host, smoke, script } = flow();
        host.source = SRC;
        host.answer = 'Run';
        await smoke.open([]);
        assert.deepEqual(host.terminals, [{ name: 'Smoke: train-L5', shown: true, sent: [`bash '${script}'`] }]);
        assert.deepEqual(host.debugged, []);
        // From the editor title: the active smoke script, saved first.
        host.active = fileUri(script);
        host.documents.set(`file://${script}`, { isDirty: true, saved: 0 });
        await smoke.run();
        assert.equal(host.terminals.length, 2);
        assert.equal(host.documents.get(`file://${script}`)?.saved, 1);
    });

    it("Debug: the quick-pick of ranks on the script's command line, as the editor has it now", async () => {
        const { host, smoke, script } = flow();
        host.source = SRC;
        host.answer = 'Debug';
        await smoke.open([]);
        const line = fs.readFileSync(script, 'utf8').split('\n').indexOf('torchrun \\');
        assert.ok(line > 0);
        assert.deepEqual(host.debugged, [{ args: [`file://${script}`, line], options: { alwaysPick: true } }]);
        assert.deepEqual(host.terminals, []);
        // Edited and not saved: saved, and its own command line taken.
        host.documents.set(`file://${script}`, { isDirty: true, text: '#!/usr/bin/env bash\n# mine\ncd /w\nexport A=1\n\ntorchrun train.py\n', saved: 0 });
        assert.equal(await smoke.debug(fileUri(script)), true);
        assert.equal(host.documents.get(`file://${script}`)?.saved, 1);
        assert.deepEqual(host.debugged[1].args, [`file://${script}`, 5]);
    });

    it('refuses what is not a smoke script, and a smoke script with no command left', async () => {
        const { host, smoke } = flow();
        await smoke.run(fileUri('/w/train.sh'));
        await smoke.run();
        assert.equal(await smoke.debug('/w/x.smoke.sh'), false);
        assert.deepEqual(host.warnings, Array(3).fill('Rank Debugger: open a smoke script first (Smoke Run on a training command).'));
        assert.deepEqual(host.terminals, []);
        host.documents.set('file:///s/empty.smoke.sh', { isDirty: false, text: '#!/usr/bin/env bash\n# all gone\ncd /w\n', saved: 0 });
        assert.equal(await smoke.debug(fileUri('/s/empty.smoke.sh')), false);
        assert.equal(host.warnings[3], 'Rank Debugger: the smoke script has no command left.');
        assert.deepEqual(host.debugged, []);
    });

    it('gives its content provider back when disposed', () => {
        const { host, smoke } = flow();
        smoke.dispose();
        assert.equal(host.content?.disposed, true);
    });
});
