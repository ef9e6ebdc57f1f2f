import * as assert from 'node:assert/strict';
import type * as vscode from 'vscode';
import type { Server } from '../../../../extension/src/common/server';
import type { CheckRanksArgs } from '../../../../extension/src/core/rankCheck';
import type { LaunchPlan } from '../../../../extension/src/core/ranks';
import type { CommandHost } from '../../../../extension/src/launch/host';
import { RankMemory } from '../../../../extension/src/launch/rankPick';
import type { StartedRankPicks } from '../../../../extension/src/launch/startedRankPick';
import { debugCommand, debugTerminalSelection, generateLaunchJson, planFor, sourceFromArgs, type CommandSource, type Context } from '../../../../extension/src/launch/trainingCommand';
import { FakePickHost, Memento, ranksReply, shownPick, tick } from './fakes';

/** A Uri as the commands compare and print it. */
function uri(path: string): vscode.Uri {
    return { scheme: 'file', fsPath: path, path, toString: () => `file://${path}` } as unknown as vscode.Uri;
}

const FOLDER = { uri: uri('/w'), name: 'w', index: 0 } as vscode.WorkspaceFolder;

/** A command's source with its Uri as text, to compare. */
function shown(src: CommandSource | undefined): unknown {
    return src && { ...src, uri: src.uri?.toString() };
}

/** The launch commands' host: every notification, input box, save and session start recorded. */
class FakeCommandHost extends FakePickHost implements CommandHost {
    readonly errors: string[] = [];
    readonly warnings: string[] = [];
    readonly logged: string[] = [];
    readonly log = { info: (m: string) => this.logged.push(m), warn: (m: string) => this.logged.push(`warn: ${m}`) };
    editor: { uri: vscode.Uri; languageId: string; line: number } | undefined;
    inputs: (string | undefined)[] = [];
    readonly saved: string[] = [];
    readonly prepared: (string | undefined)[] = [];
    discarded = 0;
    readonly sessions: vscode.DebugConfiguration[] = [];
    folder: vscode.WorkspaceFolder | undefined = FOLDER;
    selection: { text: string | undefined; cwd: string | undefined } = { text: undefined, cwd: undefined };
    readonly written: { configurations: readonly { name: string }[]; terminalCommand?: readonly string[] }[] = [];

    showError(message: string): void {
        this.errors.push(message);
    }
    showWarning(message: string): void {
        this.warnings.push(message);
    }
    parseUri(text: string): vscode.Uri {
        return uri(text.replace(/^file:\/\//, ''));
    }
    isUri(value: unknown): value is vscode.Uri {
        return typeof value === 'object' && value !== null && 'fsPath' in value;
    }
    activeEditor(): { uri: vscode.Uri; languageId: string; line: number } | undefined {
        return this.editor;
    }
    showInputBox(): Thenable<string | undefined> {
        return Promise.resolve(this.inputs.shift());
    }
    folderOf(): vscode.WorkspaceFolder | undefined {
        return this.folder;
    }
    saveIfDirty(u: vscode.Uri): Thenable<void> {
        this.saved.push(u.fsPath);
        return Promise.resolve();
    }
    prepareLaunch(_server: unknown, cwd: string | undefined): void {
        this.prepared.push(cwd);
    }
    discardLaunch(): void {
        this.discarded += 1;
    }
    startJobSession(_folder: vscode.WorkspaceFolder | undefined, config: vscode.DebugConfiguration): Thenable<boolean> {
        this.sessions.push(config);
        return Promise.resolve(true);
    }
    terminalSelection(): Promise<{ text: string | undefined; cwd: string | undefined }> {
        return Promise.resolve(this.selection);
    }
    writeLaunchJson(_folder: vscode.WorkspaceFolder, configurations: readonly { name: string }[], _compounds: readonly { name: string }[], terminalCommand?: readonly string[]): Promise<void> {
        this.written.push({ configurations, terminalCommand });
        return Promise.resolve();
    }
}

const PLAN: LaunchPlan = { launcher: 'torchrun', title: 'train.py', world_size: 2, entry: { kind: 'script', target: 'train.py' }, ranks: [0, 1].map((rank) => ({ rank, node_rank: 0, local_rank: rank })) };
const CHECKS: Record<string, unknown> = { all: ranksReply([0, 1], false, '0,1'), '0': ranksReply([0]), local0: ranksReply([0]), '1': ranksReply([1]), '1+arm': ranksReply([1], true) };

/** The language server: `rankdebug.plan` answers `plan`, checks from CHECKS; every request recorded. */
function context(plan: unknown = PLAN, extra: Record<string, unknown> = {}): { ctx: Context; asked: { command: string; arg: unknown }[]; followed: string[] } {
    const asked: { command: string; arg: unknown }[] = [];
    const followed: string[] = [];
    const answers: Record<string, (arg: unknown) => unknown> = {
        'rankdebug.plan': () => plan,
        'rankdebug.checkRanks': (arg) => CHECKS[(arg as CheckRanksArgs).spec] ?? { error: { message: 'no' } },
        ...Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, () => v])),
    };
    const server = {
        execute: (command: string, arg: unknown) => {
            asked.push({ command, arg });
            return Promise.resolve(answers[command]?.(arg));
        },
        python: () => Promise.resolve({ python: '/venv/bin/python' }),
    } as unknown as Server;
    const started = { follow: (name: string) => followed.push(name) } as unknown as StartedRankPicks;
    return { ctx: { server, memory: new RankMemory(new Memento().asMemento), started }, asked, followed };
}

describe('launch/trainingCommand', () => {
    it('finds the command: a code lens line, a menu on another file, the editor cursor, else the text asked for', async () => {
        const host = new FakeCommandHost();
        assert.deepEqual(shown(await sourceFromArgs(host, ['file:///w/train.sh', 3])), { uri: 'file:///w/train.sh', line: 3 });
        assert.deepEqual(await sourceFromArgs(host, [{ text: 'torchrun x.py', cwd: '/t' }]), { text: 'torchrun x.py', cwd: '/t' });
        host.editor = { uri: uri('/w/run.md'), languageId: 'markdown', line: 7 };
        assert.deepEqual(shown(await sourceFromArgs(host, [uri('/w/other.sh')])), { uri: 'file:///w/other.sh', line: 0 });
        assert.deepEqual(shown(await sourceFromArgs(host, [uri('/w/run.md')])), { uri: 'file:///w/run.md', line: 7 });
        host.editor = { uri: uri('/w/train.py'), languageId: 'python', line: 2 };
        host.inputs = ['  torchrun --nproc_per_node 2 train.py ', '   '];
        assert.deepEqual(await sourceFromArgs(host, []), { text: 'torchrun --nproc_per_node 2 train.py', cwd: '/w' });
        assert.equal(await sourceFromArgs(host, []), undefined);
    });

    it("shows the server's error with its line, and says when the line starts no Python training job", async () => {
        const host = new FakeCommandHost();
        const refused = context({ error: { message: 'unterminated quote', line: 4 } });
        assert.equal(await planFor(host, refused.ctx, { uri: uri('/w/train.sh'), line: 3 }), undefined);
        assert.deepEqual(host.errors, ['Rank Debugger: unterminated quote (line 4)']);
        assert.deepEqual(refused.asked[0], { command: 'rankdebug.plan', arg: { uri: 'file:///w/train.sh', line: 3 } });
        const other = context({ launcher: 'other', entry: null });
        assert.equal(await planFor(host, other.ctx, { text: 'ls -l', cwd: '/w' }), undefined);
        assert.deepEqual(host.warnings, ['Rank Debugger: this line does not start a Python training job.']);
        assert.deepEqual(other.asked[0].arg, { text: 'ls -l', language: 'shellscript', settings: { cwd: '/w' } });
    });

    it('saves the file, plans, asks which ranks and starts the job session with the choice', async () => {
        const host = new FakeCommandHost();
        const { ctx } = context();
        const started = debugCommand(host, ctx, ['file:///w/train.sh', 3]);
        const qp = await shownPick(host);
        assert.equal(qp.title, 'Debug train.py: which ranks?');
        qp.check('rank 1 · node 0 · local 1');
        await qp.enter();
        assert.equal(await started, true);
        assert.deepEqual(host.saved, ['/w/train.sh']);
        assert.deepEqual(host.prepared, ['/w'], 'a launcher started ahead while the ranks are picked');
        assert.equal(host.discarded, 0);
        assert.deepEqual(host.sessions, [{ type: 'rankdebug', request: 'launch', name: 'train.py · ranks 1', ranks: '1', source: { uri: 'file:///w/train.sh', line: 3 } }]);
        assert.equal(ctx.memory.get('file:///w/train.sh#3'), '1');
    });

    it('drops the launcher started ahead when no job comes', async () => {
        const host = new FakeCommandHost();
        const started = debugCommand(host, context().ctx, ['file:///w/train.sh', 3]);
        (await shownPick(host)).escape();
        assert.equal(await started, false);
        assert.equal(host.discarded, 1);
        assert.deepEqual(host.sessions, []);
        assert.equal(await debugCommand(host, context({ error: { message: 'no' } }).ctx, ['file:///w/train.sh', 3]), false);
        assert.equal(host.discarded, 2);
    });

    it('takes the remembered choice from a code lens without asking, unless asked to pick', async () => {
        const host = new FakeCommandHost();
        const { ctx } = context();
        await ctx.memory.set('file:///w/train.sh#3', '1+arm');
        assert.equal(await debugCommand(host, ctx, ['file:///w/train.sh', 3]), true);
        assert.equal(host.picks.length, 0);
        assert.deepEqual(host.sessions[0], { type: 'rankdebug', request: 'launch', name: 'train.py · ranks 1 · armed', ranks: '1', arm: true, source: { uri: 'file:///w/train.sh', line: 3 } });
        const again = debugCommand(host, ctx, ['file:///w/train.sh', 3], { alwaysPick: true });
        (await shownPick(host)).escape();
        assert.equal(await again, false);
    });

    it('follows a job whose ranks are chosen as they start, before its session starts', async () => {
        const host = new FakeCommandHost();
        const { ctx, followed } = context({ launcher: 'python', title: 'ray_trainer.py', entry: { kind: 'script', target: 'ray_trainer.py' }, ranks: [] });
        const started = debugCommand(host, ctx, [{ text: 'python ray_trainer.py', cwd: '/w' }]);
        const qp = await shownPick(host);
        qp.activeItems = [qp.items[0]];
        await qp.enter();
        assert.equal(await started, true);
        assert.deepEqual(followed, ['ray_trainer.py · ranks as they start']);
        assert.deepEqual(host.sessions[0], { type: 'rankdebug', request: 'launch', name: 'ray_trainer.py · ranks as they start', arm: true, source: { text: 'python ray_trainer.py', cwd: '/w' } });
        assert.equal(ctx.memory.get('text:python ray_trainer.py'), undefined, 'not remembered: it asks again');
    });

    it("debugs a terminal's selected command without its prompt, and asks for a selection first", async () => {
        const host = new FakeCommandHost();
        const { ctx, asked } = context();
        assert.equal(await debugTerminalSelection(host, ctx), false);
        assert.deepEqual(host.warnings, ['Select a training command in the terminal first.']);
        host.selection = { text: '$ torchrun --nproc_per_node 2 train.py\n', cwd: '/runs' };
        const started = debugTerminalSelection(host, ctx);
        (await shownPick(host)).escape();
        await started;
        assert.deepEqual(asked[0].arg, { text: 'torchrun --nproc_per_node 2 train.py', language: 'shellscript', settings: { cwd: '/runs' } });
    });

    it("writes launch.json from the server's configurations, and says what stops it", async () => {
        const host = new FakeCommandHost();
        const reply = { configurations: [{ name: 'rank 1' }], compounds: [{ name: 'train.py ranks 1' }], terminalCommand: ['rankdebug', 'launch'], warnings: ['ranks 2-3 run on node 1'] };
        const { ctx, asked } = context(PLAN, { 'rankdebug.launchJson': reply });
        const pick = async (): Promise<void> => {
            const qp = await shownPick(host);
            qp.check('rank 1 · node 0 · local 1');
            await qp.enter();
        };
        const done = generateLaunchJson(host, ctx, ['file:///w/train.sh', 3]);
        await pick();
        await done;
        assert.deepEqual(asked.at(-1), { command: 'rankdebug.launchJson', arg: { uri: 'file:///w/train.sh', line: 3, ranks: '1' } });
        assert.deepEqual(host.written, [{ configurations: reply.configurations, terminalCommand: reply.terminalCommand }]);
        assert.deepEqual(host.logged, ['warn: ranks 2-3 run on node 1']);
        assert.equal(host.picks.at(-1)?.title, 'launch.json for train.py: which ranks?');
        assert.ok(!host.picks.at(-1)?.items.some((i) => i.label === 'Arm every rank'), 'launch.json arms nothing');
        host.folder = undefined;
        const noFolder = generateLaunchJson(host, ctx, ['file:///w/train.sh', 3]);
        await pick();
        await noFolder;
        assert.deepEqual(host.errors, ['Open a folder to write .vscode/launch.json.']);
        const refused = context(PLAN, { 'rankdebug.launchJson': { error: { message: 'rank 1 is outside the job' } } });
        const done2 = generateLaunchJson(host, refused.ctx, ['file:///w/train.sh', 3]);
        await pick();
        await done2;
        await tick();
        assert.equal(host.errors[1], 'Rank Debugger: rank 1 is outside the job');
        assert.equal(host.written.length, 1);
    });
});
