import * as assert from 'node:assert/strict';
import type * as vscode from 'vscode';
import type { ConfigurationResolver, RankdebugConfiguration } from '../../../../extension/src/debug/configuration';
import { ConfigurationProvider } from '../../../../extension/src/debug/configurationProvider';
import { FakeHost } from './fakes';

/** A resolver that records its calls and marks what it returns (or throws `fail`). */
class Recorder implements ConfigurationResolver {
    readonly calls: [vscode.WorkspaceFolder | undefined, RankdebugConfiguration][] = [];
    fail: unknown;

    constructor(private readonly kind: string) {}

    async resolve(folder: vscode.WorkspaceFolder | undefined, config: RankdebugConfiguration): Promise<RankdebugConfiguration> {
        this.calls.push([folder, config]);
        if (this.fail !== undefined) throw this.fail;
        return { ...config, resolvedBy: this.kind };
    }
}

const FOLDER = { name: 'w', index: 0 } as unknown as vscode.WorkspaceFolder;

function setup(): { host: FakeHost; launch: Recorder; attach: Recorder; provider: ConfigurationProvider } {
    const host = new FakeHost();
    const launch = new Recorder('launch');
    const attach = new Recorder('attach');
    return { host, launch, attach, provider: new ConfigurationProvider({ launch, attach }, host) };
}

describe('debug/configurationProvider', () => {
    it('debugs the command under the cursor on F5 without a launch.json', async () => {
        const { host, provider } = setup();
        assert.equal(await provider.resolveDebugConfiguration(undefined, { type: '', request: '', name: '' }), undefined);
        assert.deepEqual(host.commands, ['rankdebug.debugCommand']);
        const config = { type: 'rankdebug', request: 'launch', name: 'Debug', command: 'torchrun a.py' };
        assert.equal(await provider.resolveDebugConfiguration(undefined, config), config);
        assert.equal(host.commands.length, 1);
    });

    it('sends each request kind to its resolver', async () => {
        const { launch, attach, provider } = setup();
        const l = await provider.resolveDebugConfigurationWithSubstitutedVariables(FOLDER, { type: 'rankdebug', request: 'launch', name: 'L' });
        const a = await provider.resolveDebugConfigurationWithSubstitutedVariables(FOLDER, { type: 'rankdebug', request: 'attach', name: 'A' });
        assert.equal(l?.resolvedBy, 'launch');
        assert.equal(a?.resolvedBy, 'attach');
        assert.deepEqual(launch.calls.map(([folder, c]) => [folder, c.name]), [[FOLDER, 'L']]);
        assert.deepEqual(attach.calls.map(([folder, c]) => [folder, c.name]), [[FOLDER, 'A']]);
    });

    it("passes the extension's own configurations (a job's parent, a rank's child) through as they are", async () => {
        const { launch, attach, provider } = setup();
        const own: RankdebugConfiguration[] = [
            { type: 'rankdebug', request: 'attach', name: 'rank 1', connect: { port: 5001 }, __rank: { rank: 1 } },
            { type: 'rankdebug', request: 'attach', name: 'job', __attach: { job: 'J', ranks: [] } },
            { type: 'rankdebug', request: 'launch', name: 'job', __job: { argv: [], env: {}, cwd: '/', ranks: null, rankSpec: '', worldSize: null, title: 't', armed: false } },
        ];
        for (const config of own) assert.equal(await provider.resolveDebugConfigurationWithSubstitutedVariables(undefined, config), config);
        assert.equal(launch.calls.length + attach.calls.length, 0);
    });

    it('rejects any other request, saying which ones there are', async () => {
        const { host, provider } = setup();
        for (const request of ['test', 'constructor']) {
            assert.equal(await provider.resolveDebugConfigurationWithSubstitutedVariables(undefined, { type: 'rankdebug', request, name: 'x' }), undefined);
        }
        assert.deepEqual(host.errors, ['Rank Debugger: "request" must be "launch" or "attach"', 'Rank Debugger: "request" must be "launch" or "attach"']);
    });

    it("shows a resolver's error and starts no session", async () => {
        const { host, launch, attach, provider } = setup();
        launch.fail = new Error('no such file');
        attach.fail = 'plain text';
        assert.equal(await provider.resolveDebugConfigurationWithSubstitutedVariables(undefined, { type: 'rankdebug', request: 'launch', name: 'L' }), undefined);
        assert.equal(await provider.resolveDebugConfigurationWithSubstitutedVariables(undefined, { type: 'rankdebug', request: 'attach', name: 'A' }), undefined);
        assert.deepEqual(host.errors, ['Rank Debugger: no such file', 'Rank Debugger: plain text']);
    });
});
