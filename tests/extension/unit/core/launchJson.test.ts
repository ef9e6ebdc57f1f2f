import * as assert from 'node:assert/strict';
import { parse } from 'jsonc-parser';
import { mergeLaunchJson } from '../../../../extension/src/core/launchJson';

const USER = `{
    // my own comment, keep me
    "version": "0.2.0",
    "configurations": [
        {
            "name": "Python: current file", // inline comment
            "type": "debugpy",
            "request": "launch",
            "program": "\${file}"
        },
        { "name": "rank 0", "type": "rankdebug", "request": "attach", "connect": { "port": 1 } },
    ]
}
`;

describe('core/launchJson', () => {
    it('creates a file when there is none', () => {
        const r = mergeLaunchJson(undefined, [{ name: 'rank 0', type: 'rankdebug', request: 'attach' }], [{ name: 'job', configurations: ['rank 0'] }]);
        const doc = parse(r.text) as { version: string; configurations: { name: string }[]; compounds: { name: string }[] };
        assert.equal(doc.version, '0.2.0');
        assert.deepEqual(doc.configurations.map((c) => c.name), ['rank 0']);
        assert.deepEqual(doc.compounds.map((c) => c.name), ['job']);
        assert.deepEqual(r.added, ['rank 0', 'job']);
    });

    it('keeps comments, replaces by name and appends new ones', () => {
        const r = mergeLaunchJson(USER, [
            { name: 'rank 0', type: 'rankdebug', request: 'attach', connect: { port: 5678 } },
            { name: 'rank 1', type: 'rankdebug', request: 'attach', connect: { port: 5679 } },
        ], [{ name: 'ranks 0,1', configurations: ['rank 0', 'rank 1'] }]);
        assert.ok(r.text.includes('// my own comment, keep me'));
        assert.ok(r.text.includes('// inline comment'));
        const doc = parse(r.text) as { configurations: { name: string; connect?: { port: number } }[]; compounds: unknown[] };
        assert.deepEqual(doc.configurations.map((c) => c.name), ['Python: current file', 'rank 0', 'rank 1']);
        assert.equal(doc.configurations[1].connect?.port, 5678);
        assert.equal(doc.compounds.length, 1);
        assert.deepEqual(r.replaced, ['rank 0']);
        assert.deepEqual(r.added, ['rank 1', 'ranks 0,1']);
    });

    it('is idempotent', () => {
        const configs = [{ name: 'rank 3', type: 'rankdebug', request: 'attach' }];
        const once = mergeLaunchJson(USER, configs).text;
        const twice = mergeLaunchJson(once, configs).text;
        assert.equal(twice, once);
    });

    it('adds a version and a configurations array when missing', () => {
        const r = mergeLaunchJson('{\n  // empty\n}\n', [{ name: 'a' }]);
        const doc = parse(r.text) as { version: string; configurations: unknown[] };
        assert.equal(doc.version, '0.2.0');
        assert.equal(doc.configurations.length, 1);
        assert.ok(r.text.includes('// empty'));
    });

    it('refuses text that is not a JSON object', () => {
        assert.throws(() => mergeLaunchJson('[1, 2]', [{ name: 'a' }]));
        assert.throws(() => mergeLaunchJson('{"configurations": [', [{ name: 'a' }]));
    });
});
