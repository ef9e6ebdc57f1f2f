import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { controlDir, readJobs, takesCommands, type JobInfo } from '../../../../extension/src/core/jobList';
import { findJob, statusText } from '../../../../extension/src/core/jobs';
import { DEFAULTS, hostFlags, readSettings, toServerSettings } from '../../../../extension/src/core/settings';

const ROOT = path.resolve(__dirname, '../../..');
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
    const answer = (jobs: object[]): JobInfo[] => readJobs({ jobs, registry: '/run/user/1000/rankdebug' }).jobs;

    it('takes the newest supervised job for `latest`, and any job by its id', () => {
        const jobs = answer([
            { id: 'B', source: 'registry', start_time: 20, dir: '/r/B' },
            { id: 'A', source: 'registry', start_time: 10, dir: '/r/A' },
            { id: '99@node0', source: 'scan', start_time: 30 },
        ]);
        assert.equal(findJob('latest', jobs)?.id, 'B');
        assert.equal(findJob('', jobs)?.id, 'B');
        assert.equal(findJob('A', jobs)?.id, 'A');
        assert.equal(findJob('99@node0', jobs)?.id, '99@node0');
        assert.equal(findJob('nope', jobs), undefined);
        assert.equal(findJob('latest', answer([{ id: '99@node0', source: 'scan' }])), undefined);
    });

    it("takes a job's folder and the registry's from the answer, never from a rule of its own", () => {
        const snapshot = readJobs({ registry: '/run/user/1000/rankdebug', jobs: [{ id: 'A', source: 'registry', dir: '/run/user/1000/rankdebug/A' }, { id: '9@n', source: 'scan', dir: null }] });
        assert.equal(snapshot.registry, '/run/user/1000/rankdebug');
        assert.deepEqual(snapshot.jobs.map((j) => [controlDir(j), takesCommands(j)]), [
            ['/run/user/1000/rankdebug/A', true],
            [null, false],
        ]);
        // A supervised job of another host (`--hosts`): its folder is not here, no commands go to it.
        assert.equal(controlDir(readJobs({ jobs: [{ id: 'R', source: 'registry' }] }).jobs[0]), null);
        assert.equal(readJobs({}).registry, null);
    });

    it('words the status text', () => {
        assert.equal(statusText(2, 4), 'rankdebug: 2/4 ranks paused');
    });

    it('reads no registry folder itself', () => {
        const sources = fs.readdirSync(path.join(ROOT, 'extension', 'src'), { recursive: true }) as string[];
        const readers = sources.filter((f) => f.endsWith('.ts') && /rankdebug-\$\{|XDG_RUNTIME_DIR|registryRoot/.test(read(path.join('extension', 'src', f))));
        assert.deepEqual(readers, []);
    });
});
