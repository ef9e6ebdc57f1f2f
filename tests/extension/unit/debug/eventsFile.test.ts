import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { EventsFile } from '../../../../extension/src/debug/eventsFile';
import { until } from './fakes';

describe('debug/eventsFile', () => {
    let dir: string;
    const opened: EventsFile[] = [];
    const follow = (file: string, lines: string[]): EventsFile => {
        const events = new EventsFile(file, (l) => lines.push(l));
        opened.push(events);
        return events;
    };
    beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rankdebug-follow-'))));
    afterEach(() => {
        // A failed test leaves its watcher open, and mocha would wait for it.
        opened.splice(0).forEach((e) => e.close());
        fs.rmSync(dir, { recursive: true, force: true });
    });

    it('reads what the file holds, then each complete line added, once', async () => {
        const file = path.join(dir, 'events.jsonl');
        fs.writeFileSync(file, 'one\r\ntwo\nthr');
        const lines: string[] = [];
        const events = follow(file, lines);
        events.start();
        assert.deepEqual(lines, ['one', 'two'], 'a partial line waits for its end');
        assert.ok(events.watching);
        fs.appendFileSync(file, 'ee\nfour\n');
        await until(() => lines.length === 4, 'the added lines');
        assert.deepEqual(lines, ['one', 'two', 'three', 'four']);
        events.close();
        assert.equal(events.watching, false);
        fs.appendFileSync(file, 'five\n');
        await new Promise((r) => setTimeout(r, 100));
        assert.equal(lines.length, 4, 'nothing after close');
    });

    it('follows nothing when the file is gone already', () => {
        const lines: string[] = [];
        const events = follow(path.join(dir, 'missing.jsonl'), lines);
        events.start();
        assert.equal(events.watching, false);
        assert.deepEqual(lines, []);
    });
});
