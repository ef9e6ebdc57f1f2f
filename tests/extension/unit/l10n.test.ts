import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
const read = (p: string): string => fs.readFileSync(path.join(ROOT, p), 'utf8');

function sources(dir: string): string[] {
    return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? sources(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : [],
    );
}

describe('localisation', () => {
    it('translates every l10n.t string of the extension into Chinese', () => {
        const zh = JSON.parse(read('l10n/bundle.l10n.zh-cn.json')) as Record<string, string>;
        const missing: string[] = [];
        for (const file of sources('extension/src')) {
            for (const m of read(file).matchAll(/l10n\.t\(\s*'((?:[^'\\]|\\.)*)'/g)) {
                const key = m[1].replace(/\\'/g, "'");
                if (!(key in zh)) missing.push(`${file}: ${key}`);
            }
        }
        assert.deepEqual(missing, []);
        for (const [k, v] of Object.entries(zh)) {
            const placeholders = (s: string): string[] => (s.match(/\{\d+\}/g) ?? []).sort();
            assert.deepEqual(placeholders(v), placeholders(k), `placeholders of ${k}`);
        }
    });

    it('has every manifest string in English and Chinese', () => {
        const manifest = read('package.json');
        const en = JSON.parse(read('package.nls.json')) as Record<string, string>;
        const zh = JSON.parse(read('package.nls.zh-cn.json')) as Record<string, string>;
        const used = [...manifest.matchAll(/"%([\w.]+)%"/g)].map((m) => m[1]);
        assert.deepEqual(used.filter((k) => !(k in en)), []);
        assert.deepEqual(Object.keys(en).filter((k) => !(k in zh)), []);
    });
});
