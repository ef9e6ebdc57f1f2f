import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { findJob, listJobs, registryRoot, statusText } from '../../../extension/src/core/jobs';
import { DEFAULTS, readSettings, toServerSettings } from '../../../extension/src/core/settings';

describe('core/settings', () => {
    it('falls back to defaults for missing or ill-typed values', () => {
        const values: Record<string, unknown> = { host: 5, basePort: 70000, collectiveTimeout: null, attachOn: 'later', justMyCode: false, python: '/x/python' };
        const s = readSettings((k) => values[k]);
        assert.equal(s.host, DEFAULTS.host);
        assert.equal(s.basePort, 0);
        assert.equal(s.collectiveTimeout, null);
        assert.equal(s.attachOn, 'start');
        assert.equal(s.justMyCode, false);
        assert.equal(s.python, '/x/python');
    });

    it('maps to the server keys', () => {
        const s = readSettings((k) => ({ waitForClient: false, collectiveTimeout: 600, basePort: 29500 })[k as string]);
        assert.deepEqual(toServerSettings(s, ['/py', '/main.py'], 'file:///w'), {
            interpreter: ['/py', '/main.py'], host: '127.0.0.1', basePort: 29500, wait: false, collectiveTimeout: 600, attachOn: 'start', codeLens: true, workspace: 'file:///w',
        });
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

    it('words the status text', () => {
        assert.equal(statusText(2, 4), 'rankdebug: 2/4 ranks paused');
    });

    it('finds the registry where the Python side puts it', () => {
        assert.equal(registryRoot({ XDG_RUNTIME_DIR: root }, process.getuid?.() ?? 0), path.join(root, 'rankdebug'));
        assert.equal(registryRoot({}, 1234), '/tmp/rankdebug-1234');
        assert.equal(registryRoot({ XDG_RUNTIME_DIR: '/nonexistent' }, 7), '/tmp/rankdebug-7');
    });
});
