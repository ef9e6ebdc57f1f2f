import * as assert from 'node:assert/strict';
import type * as vscode from 'vscode';
import type { DebugPlanReply } from '../../../../extension/src/core/debugPlan';
import type { RankdebugConfiguration } from '../../../../extension/src/debug/configuration';
import { ExceptionFilters, PRESET_ENV, presetEnv, sourceArguments, type ClientConfig } from '../../../../extension/src/debug/clientConfig';
import { LaunchResolver, planErrorText } from '../../../../extension/src/debug/launchResolver';
import { FakeHost, FakeServer, l10n } from './fakes';

const FOLDER = { uri: { fsPath: '/w', toString: () => 'file:///w' }, name: 'w', index: 0 } as unknown as vscode.WorkspaceFolder;

function reply(over: Partial<DebugPlanReply> = {}): DebugPlanReply {
    return {
        plan: { launcher: 'torchrun', world_size: 4, entry: { kind: 'file', target: 'src/train.py' } },
        argv: ['/usr/bin/python3', '/ext/rankdebug_main.py', 'launch', '--json', '--', 'torchrun', 'src/train.py'],
        env: { NCCL_DEBUG: 'WARN' },
        cwd: '/w',
        rankSpec: '0',
        ranks: [0],
        warnings: [],
        ...over,
    };
}

function launch(over: Partial<RankdebugConfiguration>): RankdebugConfiguration {
    return { type: 'rankdebug', request: 'launch', name: 'Debug', ...over };
}

function setup(answer: unknown = reply()): { host: FakeHost; server: FakeServer; resolver: LaunchResolver } {
    const host = new FakeHost();
    const server = new FakeServer(() => answer);
    return { host, server, resolver: new LaunchResolver(server, host) };
}

describe('debug/launchResolver', () => {
    it("asks the server's debug plan for the command, its ranks, the breakpoints and the overrides", async () => {
        const { host, server, resolver } = setup();
        host.breakpoints = ['/w/src/train.py:12'];
        await resolver.resolve(FOLDER, launch({ command: 'torchrun --nproc_per_node 4 src/train.py', ranks: '1,3', cwd: '/w/run', env: { SEED: '1' }, python: '/venv/bin/python' }));
        assert.deepEqual(server.calls, [
            {
                command: 'rankdebug.debugPlan',
                arg: {
                    text: 'torchrun --nproc_per_node 4 src/train.py',
                    language: 'shellscript',
                    ranks: '1,3',
                    breakpoints: ['/w/src/train.py:12'],
                    settings: { cwd: '/w/run', env: { SEED: '1' }, interpreter: ['/venv/bin/python', '/ext/rankdebug_main.py'] },
                },
            },
        ]);
    });

    it('sends only what the configuration sets: rank 0 and arming count, an empty env does not', async () => {
        const { server, resolver } = setup();
        await resolver.resolve(FOLDER, launch({ command: ['python', 'a.py'], env: {}, source: { cwd: '/from/terminal' } }));
        await resolver.resolve(FOLDER, launch({ command: ['python', 'a.py'], ranks: 0, arm: true }));
        await resolver.resolve(FOLDER, launch({ command: ['python', 'a.py'], arm: false }));
        assert.deepEqual(
            server.calls.map((c) => c.arg),
            [
                { argv: ['python', 'a.py'], breakpoints: [], settings: { cwd: '/from/terminal' } },
                { argv: ['python', 'a.py'], ranks: 0, arm: true, breakpoints: [], settings: {} },
                { argv: ['python', 'a.py'], breakpoints: [], settings: {} },
            ],
        );
    });

    it("takes the editor's line before `command`", async () => {
        const { server, resolver } = setup();
        await resolver.resolve(FOLDER, launch({ command: 'ignored', source: { uri: 'file:///w/train.sh', line: 7 } }));
        const arg = server.calls[0].arg as Record<string, unknown>;
        assert.equal(arg.uri, 'file:///w/train.sh');
        assert.equal(arg.line, 7);
        assert.equal(arg.text, undefined);
    });

    it("puts the server's process on the configuration for the job adapter", async () => {
        const answer = reply({ ranks: [1, 3], rankSpec: '1,3', title: 'train (torchrun)', armed: true, configurations: [{ type: 'rankdebug', request: 'attach', name: 'rank 1', ranks: [1] }] });
        const { resolver } = setup(answer);
        const config = await resolver.resolve(FOLDER, launch({ command: 'torchrun src/train.py' }));
        assert.deepEqual(config.__job, {
            argv: answer.argv,
            env: { NCCL_DEBUG: 'WARN' },
            cwd: '/w',
            ranks: [1, 3],
            rankSpec: '1,3',
            worldSize: 4,
            title: 'train (torchrun)',
            armed: true,
            configurations: answer.configurations,
        });
        assert.notEqual(config.__job?.env, answer.env, 'the env is a copy');
    });

    it("names the job after its entry when an older server sends no title, and reads a missing world size as unknown", async () => {
        const { resolver } = setup(reply({ plan: { launcher: 'python', entry: { kind: 'file', target: 'src/train.py' } } }));
        const job = (await resolver.resolve(FOLDER, launch({ command: 'python src/train.py' }))).__job;
        assert.equal(job?.title, 'train.py');
        assert.equal(job?.worldSize, null);
        assert.equal(job?.armed, false);
    });

    it("fills in justMyCode from the folder's setting, and keeps the configuration's own", async () => {
        const { host, resolver } = setup();
        host.justMyCodeSetting = false;
        assert.equal((await resolver.resolve(FOLDER, launch({ command: 'python a.py' }))).justMyCode, false);
        assert.deepEqual(host.justMyCodeScopes, [FOLDER.uri]);
        host.justMyCodeSetting = true;
        assert.equal((await resolver.resolve(FOLDER, launch({ command: 'python a.py', justMyCode: false }))).justMyCode, false);
        assert.equal(host.justMyCodeScopes.length, 1, 'the setting is not read when the configuration has its own');
    });

    it('sends every breakpoint and the exception filters with the launch, in RANKDEBUG_PRESET', async () => {
        const { host, resolver } = setup();
        const client: ClientConfig = {
            breakpoints: sourceArguments([{ path: '/w/src/train.py', breakpoints: [{ line: 12, condition: 'ranks 1 and step == 3', hitCondition: '2', logMessage: undefined }] }]),
            functionBreakpoints: [],
            exceptionFilters: ['raised', 'uncaught'],
        };
        Object.assign(host, { clientConfig: () => client });
        const job = (await resolver.resolve(FOLDER, launch({ command: 'torchrun src/train.py' }))).__job;
        assert.equal(job?.env.NCCL_DEBUG, 'WARN');
        // The shape the supervisor reads (supervise/gates/preset.py): setBreakpoints arguments per source.
        assert.deepEqual(JSON.parse(job?.env[PRESET_ENV] ?? 'null'), {
            breakpoints: [{ source: { path: '/w/src/train.py' }, breakpoints: [{ line: 12, condition: 'ranks 1 and step == 3', hitCondition: '2' }] }],
            functionBreakpoints: [],
            exceptionFilters: ['raised', 'uncaught'],
        });
    });

    it('leaves a configuration too big for the environment out: the ranks wait for it as before', () => {
        const many = Array.from({ length: 5000 }, (_, i) => ({ line: i + 1, condition: `step == ${i}` }));
        assert.deepEqual(presetEnv({ breakpoints: [{ source: { path: '/w/a.py' }, breakpoints: many }], functionBreakpoints: [], exceptionFilters: [] }), {});
    });

    it("remembers the exception filters a rank session's client last set (uncaught before any)", () => {
        const filters = new ExceptionFilters();
        assert.deepEqual(filters.current, ['uncaught']);
        const parent = { configuration: { type: 'rankdebug', __job: {} } } as unknown as vscode.DebugSession;
        assert.equal(filters.createDebugAdapterTracker(parent), undefined);
        const rank = { configuration: { type: 'rankdebug', __rank: { rank: 1 } } } as unknown as vscode.DebugSession;
        const tracker = filters.createDebugAdapterTracker(rank);
        tracker?.onWillReceiveMessage?.({ type: 'request', command: 'setBreakpoints', arguments: { filters: ['x'] } });
        assert.deepEqual(filters.current, ['uncaught']);
        tracker?.onWillReceiveMessage?.({ type: 'request', command: 'setExceptionBreakpoints', arguments: { filters: ['raised', 7] } });
        assert.deepEqual(filters.current, ['raised']);
    });

    it('logs the warnings of the plan', async () => {
        const { host, resolver } = setup(reply({ warnings: ['--nnodes 2: only this node is debugged'] }));
        await resolver.resolve(undefined, launch({ command: 'torchrun a.py' }));
        assert.deepEqual(host.logged.warn, ['--nnodes 2: only this node is debugged']);
    });

    it('rejects a configuration without a command, before asking the server', async () => {
        const { server, resolver } = setup();
        await assert.rejects(resolver.resolve(FOLDER, launch({ command: '   ' })), { message: 'a launch configuration needs "command": the training command to run' });
        await assert.rejects(resolver.resolve(FOLDER, launch({})), /needs "command"/);
        assert.equal(server.calls.length, 0);
    });

    it("rejects with the server's error, and its line when it has one", async () => {
        await assert.rejects(setup({ error: { message: 'unknown option --nproc', line: 3 } }).resolver.resolve(FOLDER, launch({ command: 'x' })), { message: 'unknown option --nproc (line 3)' });
        await assert.rejects(setup({ error: { message: 'no such file', line: null } }).resolver.resolve(FOLDER, launch({ command: 'x' })), { message: 'no such file' });
        assert.equal(planErrorText({ error: { message: 'bad', line: 12 } }, l10n), 'bad (line 12)');
    });

    it('leaves the configuration without a job when the server fails', async () => {
        const host = new FakeHost();
        const resolver = new LaunchResolver(
            new FakeServer(() => {
                throw new Error('the language server cannot start');
            }),
            host,
        );
        const config = launch({ command: 'torchrun a.py' });
        await assert.rejects(resolver.resolve(FOLDER, config), /cannot start/);
        assert.equal(config.__job, undefined);
    });
});
