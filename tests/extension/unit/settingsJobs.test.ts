import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { findJob, listJobs, registryRoot, statusText, untrustedFolder } from '../../../extension/src/core/jobs';
import { DEFAULTS, hostFlags, readSettings, toServerSettings } from '../../../extension/src/core/settings';

const ROOT = path.resolve(__dirname, '../..');
const read = (p: string): string => fs.readFileSync(path.join(ROOT, p), 'utf8');

describe('core/settings', () => {
    it('falls back to defaults for missing or ill-typed values', () => {
        const values: Record<string, unknown> = {
            host: 5, basePort: 70000, collectiveTimeout: null, attachOn: 'later', stopRanks: 'sometimes', justMyCode: false, python: '/x/python',
            env: { A: '1', B: 2 }, debugpyBasePort: -1, maxDocumentBytes: 0, unknownValues: 'loud', showNotifications: 'onError', inheritEnv: 'yes',
        };
        const s = readSettings((k) => values[k]);
        assert.equal(s.host, DEFAULTS.host);
        assert.equal(s.basePort, 0);
        assert.equal(s.collectiveTimeout, null);
        assert.equal(s.attachOn, 'hit');
        assert.equal(s.stopRanks, 'together');
        assert.equal(s.justMyCode, false);
        assert.equal(s.python, '/x/python');
        assert.deepEqual(s.env, {});
        assert.equal(s.debugpyBasePort, 5678);
        assert.equal(s.maxDocumentBytes, 16 * 1024 * 1024);
        assert.equal(s.unknownValues, 'hint');
        assert.equal(s.showNotifications, 'onError');
        assert.equal(s.inheritEnv, false);
        // The hang watch: 0 (off) or at least a second, as `rankdebug launch --hang-seconds` takes it.
        const hang = (v: unknown): number => readSettings((k) => (k === 'hangSeconds' ? v : undefined)).hangSeconds;
        assert.deepEqual([hang(0), hang(30), hang(0.5), hang(-1), hang('60'), hang(Infinity)], [0, 30, 120, 120, 120, 120]);
    });

    it('keeps host lists that are host names only, and makes the CLI flags of them', () => {
        for (const bad of ['node1', ['-oProxyCommand=x'], ['a b'], ['a,b'], [3]]) {
            assert.deepEqual(readSettings((k) => (k === 'hosts' ? bad : undefined)).hosts, [], JSON.stringify(bad));
        }
        const s = readSettings((k) => ({ hosts: ['node1', 'node2'], sshConfig: '/c' })[k as 'hosts' | 'sshConfig']);
        assert.deepEqual(hostFlags(s), ['--hosts', 'node1,node2', '--ssh-config', '/c']);
        assert.deepEqual(hostFlags(DEFAULTS), []);
    });

    it('maps to the server keys', () => {
        const values: Record<string, unknown> = { waitForClient: false, collectiveTimeout: 600, basePort: 29500, env: { NCCL_DEBUG: 'INFO' }, cwd: '${fileDirname}', enable: false, stopRanks: 'alone', hosts: ['node1', 'gpu-07.cluster'], sshConfig: '/home/u/.ssh/cluster' };
        const s = readSettings((k) => values[k]);
        assert.deepEqual(toServerSettings(s, ['/py', '/main.py'], 'file:///w'), {
            enable: false,
            codeLens: true,
            diagnostics: true,
            cwd: '${fileDirname}',
            env: { NCCL_DEBUG: 'INFO' },
            inheritEnv: false,
            interpreter: ['/py', '/main.py'],
            host: '127.0.0.1',
            basePort: 29500,
            debugpyBasePort: 5678,
            collectiveTimeout: 600,
            hangSeconds: 120,
            wait: false,
            attachOn: 'hit',
            stopRanks: 'alone',
            hosts: ['node1', 'gpu-07.cluster'],
            sshConfig: '/home/u/.ssh/cluster',
            unknownValues: 'hint',
            showNotifications: 'off',
            maxDocumentBytes: 16777216,
            workspace: 'file:///w',
        });
        assert.equal('workspace' in toServerSettings(s, ['/py']), false);
    });

    it('contributes every setting in package.json with the same default, described in English and Chinese', () => {
        const manifest = JSON.parse(read('package.json')) as { contributes: { configuration: { properties: Record<string, { default?: unknown; description?: string; markdownDescription?: string }> } } };
        const props = manifest.contributes.configuration.properties;
        const en = JSON.parse(read('package.nls.json')) as Record<string, string>;
        const zh = JSON.parse(read('package.nls.zh-cn.json')) as Record<string, string>;
        for (const [key, value] of Object.entries(DEFAULTS)) {
            const prop = props[`rankdebug.${key}`];
            assert.ok(prop, `rankdebug.${key} is contributed`);
            assert.deepEqual(prop.default, value, `default of rankdebug.${key}`);
            const nls = /^%(.+)%$/.exec(prop.description ?? prop.markdownDescription ?? '')?.[1];
            assert.ok(nls && en[nls] && zh[nls], `rankdebug.${key} is described`);
        }
    });

    it("sends every setting the server reads (rankdebug.lsp.settings _FIELDS)", function () {
        const source = path.join(ROOT, 'pyserver/rankdebug/lsp/settings.py');
        if (!fs.existsSync(source)) this.skip();
        const text = fs.readFileSync(source, 'utf8');
        const table = /_FIELDS[^=]*=\s*\{([\s\S]*?)\n\}/.exec(text)?.[1] ?? '';
        const keys = [...table.matchAll(/^\s*"(\w+)":/gm)].map((m) => m[1]);
        assert.ok(keys.length > 10, 'the table was found');
        const sent = Object.keys(toServerSettings(DEFAULTS, ['/py']));
        assert.deepEqual(keys.filter((k) => !sent.includes(k)), []);
        assert.deepEqual(sent.filter((k) => !keys.includes(k)), []);
    });
});

describe('core/jobs', () => {
    let root: string;
    beforeEach(() => (root = fs.mkdtempSync(path.join(os.tmpdir(), 'rankdebug-reg-'))));
    afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

    function writeJob(id: string, pid: number, ranks: object[]): void {
        fs.mkdirSync(path.join(root, id));
        fs.writeFileSync(path.join(root, id, 'job.json'), JSON.stringify({ job: id, pid, launcher: 'torchrun', world_size: 4, command: ['torchrun', 'x.py'] }));
        for (const r of ranks) fs.writeFileSync(path.join(root, id, `rank-${(r as { rank: number }).rank}.json`), JSON.stringify(r));
    }

    it('lists live jobs with their ranks in order, skipping dead ones and broken files', () => {
        writeJob('20260101-000000-1', process.pid, [{ rank: 3, port: 5, state: 'listening' }, { rank: 1, port: 6, state: 'attached' }]);
        writeJob('20260101-000001-2', 999999999, [{ rank: 0 }]);
        fs.writeFileSync(path.join(root, '20260101-000000-1', 'rank-9.json'), '{half');
        const jobs = listJobs(root);
        assert.equal(jobs.length, 1);
        assert.deepEqual(jobs[0].rankEntries.map((r) => r.rank), [1, 3]);
        assert.equal(listJobs(root, true).length, 2);
        assert.equal(findJob('latest', jobs)?.job, '20260101-000000-1');
        assert.equal(findJob('nope', jobs), undefined);
        assert.deepEqual(listJobs(path.join(root, 'missing')), []);
    });

    it('trusts no linked or foreign registry folder', () => {
        writeJob('20260101-000000-1', process.pid, [{ rank: 0, port: 5 }]);
        const link = `${root}-link`;
        fs.symlinkSync(root, link);
        try {
            assert.match(untrustedFolder(link) ?? '', /symbolic link/);
            assert.deepEqual(listJobs(link), []);
            assert.equal(listJobs(root).length, 1);
            // a folder owned by someone else (here: judged as another uid would see it)
            assert.match(untrustedFolder(root, 4242) ?? '', /belongs to uid/);
            assert.equal(untrustedFolder(path.join(root, 'missing')), undefined);
        } finally {
            fs.unlinkSync(link);
        }
    });

    it('words the status text', () => {
        assert.equal(statusText(2, 4), 'rankdebug: 2/4 ranks paused');
    });

    it('finds the registry where the Python side puts it', () => {
        assert.equal(registryRoot({ XDG_RUNTIME_DIR: root }, process.getuid?.() ?? 0), path.join(root, 'rankdebug'));
        assert.equal(registryRoot({}, 1234), '/tmp/rankdebug-1234');
        assert.equal(registryRoot({ XDG_RUNTIME_DIR: '/nonexistent' }, 7), '/tmp/rankdebug-7');
    });
});
