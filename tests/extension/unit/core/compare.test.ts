import * as assert from 'node:assert/strict';
import { differsText, firstLine, functionOfFrame, groupLetter, parseTolerance, rangeText, readCompare, scalar, shortNumber, sparklines, type CompareView } from '../../../../extension/src/core/compare';
import { renderCompare, sparkSvg, type CompareState } from '../../../../extension/src/core/compareHtml';
import { l10n } from '../debug/fakes';
import { NONCE } from '../fixtures';

// What `rankdebug eval JOB all weight --json` prints for tests/launch/scripts/compare_job.py
// (4 ranks; rank 2's weight differs at element 1234 by 1e-3), texts shortened.
const W = 'tensor([[-1.1258, -1.1524, ...]])';
const summary = (mean: number, checksum: string, nan = 0): Record<string, unknown> => ({
    shape: [64, 64],
    dtype: 'torch.float32',
    device: 'cpu',
    numel: 4096,
    nan,
    inf: 0,
    min: -4.0937371253967285,
    max: 4.1014933586120605,
    mean,
    norm: 63.57162689672678,
    checksum,
});
const SAME = 'a07fdcc7ed338d9d50f3f1a86ac53b93';
const ODD = 'cb80add3d53e74ff9f6572f6ddd4ad37';
const WEIGHT = [
    { event: 'result', job: 'J1', rank: 0, pid: 10, expr: 'weight', text: W, type: 'Tensor', summary: summary(-0.009630436868832248, SAME) },
    { event: 'result', job: 'J1', rank: 1, pid: 11, expr: 'weight', text: W, type: 'Tensor', summary: summary(-0.009630436868832248, SAME) },
    { event: 'result', job: 'J1', rank: 2, pid: 12, expr: 'weight', text: W, type: 'Tensor', summary: summary(-0.009630192731350462, ODD) },
    { event: 'result', job: 'J1', rank: 3, pid: 13, expr: 'weight', text: W, type: 'Tensor', summary: summary(-0.009630436868832248, SAME) },
    {
        event: 'compare',
        groups: [
            { ranks: [0, 1, 3], text: W, checksum: SAME },
            { ranks: [2], text: W, checksum: ODD, differs: { from: 0, first: 1234, last: 1234, at: [19, 18], exact: true } },
        ],
    },
];
const GRAD = [0, 1, 2, 3].map((rank) => ({
    event: 'result',
    job: 'J1',
    rank,
    pid: 10 + rank,
    expr: 'grad',
    text: rank === 1 ? 'tensor([1., 1., 1., nan, 1., 1., 1., 1.])' : 'tensor([1., 1., 1., 1., 1., 1., 1., 1.])',
    type: 'Tensor',
    summary: { shape: [8], dtype: 'torch.float32', device: 'cpu', numel: 8, nan: rank === 1 ? 1 : 0, inf: 0, min: 1, max: 1, mean: 1, norm: rank === 1 ? 2.6457513110645907 : 2.8284271247461903, checksum: rank === 1 ? 'bb0f' : 'efff' },
}));
GRAD.push({ event: 'compare', groups: [{ ranks: [0, 2, 3], text: 'tensor([1., …])' }, { ranks: [1], text: 'tensor([1., nan, …])', differs: { from: 0, first: 3, last: 3, at: [3], exact: true } }] } as never);

const STATE: CompareState = { title: 'Compare: weight', tolerance: null, from: 0, frame: 'main' };

/** The page's text for a selector-free look: tags dropped, entities kept. */
const text = (html: string): string => html.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');

describe('core/compare', () => {
    it('reads the ranks and the groups, the largest first, the smaller ones odd', () => {
        const view = readCompare(WEIGHT, 'weight');
        assert.equal(view.job, 'J1');
        assert.deepEqual(view.ranks.map((r) => r.rank), [0, 1, 2, 3]);
        assert.deepEqual(view.groups.map((g) => [g.ranks, g.odd]), [[[0, 1, 3], false], [[2], true]]);
        assert.deepEqual(view.odd, [2]);
        const r2 = view.ranks[2];
        assert.ok(r2.ok && r2.summary);
        assert.equal(r2.summary.checksum, ODD);
        assert.deepEqual(view.groups[1].differs, { from: 0, first: 1234, last: 1234, at: [19, 18], exact: true });
    });

    it('marks no group odd when none is smaller than the largest', () => {
        const lines = [0, 1].map((rank) => ({ event: 'result', rank, text: String(rank), type: 'int', number: rank }));
        const view = readCompare([...lines, { event: 'compare', groups: [{ ranks: [0], text: '0' }, { ranks: [1], text: '1' }] }], 'rank');
        assert.deepEqual(view.odd, []);
        assert.ok(view.groups.every((g) => !g.odd));
    });

    it('keeps errors per rank and the line they name', () => {
        const view = readCompare(
            [
                { event: 'result', rank: 0, text: '1', type: 'int', number: 1, output: 'hi 0\n' },
                { event: 'error', rank: 1, message: "NameError: name 'x' is not defined", line: 1 },
                { event: 'compare', groups: [{ ranks: [0], text: '1' }] },
            ],
            'x',
        );
        assert.deepEqual(view.ranks[1], { rank: 1, ok: false, message: "NameError: name 'x' is not defined", line: 1 });
        const r0 = view.ranks[0];
        assert.ok(r0.ok);
        assert.equal(r0.output, 'hi 0\n');
    });

    it('reads scalars as the CLI writes them (NaN and Inf as words)', () => {
        assert.equal(scalar(0.5), 0.5);
        assert.ok(Number.isNaN(scalar('nan')));
        assert.equal(scalar('-inf'), -Infinity);
        assert.equal(scalar(true), 1);
        assert.equal(scalar('x'), null);
    });

    it('draws numbers against rank, else a tensor’s mean and norm; NaN/Inf points are bad', () => {
        const nums = [0, 1, 2, 3].map((rank) => ({ event: 'result', rank, text: '', type: 'float', number: rank === 1 ? 'nan' : rank * 0.5 }));
        const [line] = readCompare(nums, 'x').sparklines;
        assert.equal(line.metric, 'value');
        assert.deepEqual(line.points.map((p) => [p.value, p.bad]), [[0, false], [null, true], [1, false], [1.5, false]]);
        const grad = readCompare(GRAD, 'grad').sparklines;
        assert.deepEqual(grad.map((s) => s.metric), ['mean', 'norm']);
        assert.deepEqual(grad[0].points.map((p) => p.bad), [false, true, false, false]);
        assert.deepEqual(grad[0].points.map((p) => p.odd), [false, true, false, false]);
        // One rank, or text values: nothing to draw.
        assert.deepEqual(sparklines([{ rank: 0, ok: true, pid: null, text: "'a'", type: 'str', summary: null, output: '', number: null }]), []);
    });

    it('words a difference with the element and its index', () => {
        assert.equal(differsText({ from: 0, first: 1234, last: 1234, at: [19, 18], exact: true }, l10n), 'differs from rank 0 at element 1234 [19, 18]');
        assert.equal(differsText({ from: 0, first: 10, last: 2000, at: [0, 10], exact: true }, l10n), 'differs from rank 0 at elements 10..2000 (first [0, 10])');
        assert.equal(differsText({ from: 3, first: 10, last: 20, at: [10], exact: false }, l10n), 'differs from rank 3 within elements 10..20');
        assert.equal(differsText({ from: 1, first: null, last: null, at: null, exact: true }, l10n), 'differs from rank 1');
    });

    it('parses a tolerance, and small helpers', () => {
        assert.deepEqual(parseTolerance(''), { tolerance: null });
        assert.deepEqual(parseTolerance(' 1e-2 '), { tolerance: 0.01 });
        assert.deepEqual(parseTolerance('0.5'), { tolerance: 0.5 });
        assert.equal(parseTolerance('-1'), undefined);
        assert.equal(parseTolerance('abc'), undefined);
        assert.equal(shortNumber(-0.009630436868832248), '-0.00963044');
        assert.equal(shortNumber(63.57162689672678), '63.5716');
        assert.equal(shortNumber(1e-7), '1e-7');
        assert.equal(shortNumber(null), '–');
        assert.equal(rangeText(63.57161578133953, 63.57162689672678), '63.57162 … 63.57163');
        assert.equal(rangeText(1, 1), '1 … 1');
        assert.equal(groupLetter(0), 'A');
        assert.equal(groupLetter(27), 'AB');
        assert.equal(firstLine('a\nb'), 'a …');
        assert.equal(functionOfFrame('main'), 'main');
        assert.equal(functionOfFrame('Trainer.training_step'), 'training_step');
        assert.equal(functionOfFrame('<module>'), '<module>');
        assert.equal(functionOfFrame(''), undefined);
    });
});

// What `rankdebug eval JOB all "dist.get_rank() % 2" --per dp --json` prints on a dp 2 × tp 2 mesh
// (tests/jobs/test_job_coords.py: within each dp replica the two tp shards differ), and with
// a rank of dp 1 off by one: one compare line per set, each its own majority.
const PER = [
    ...[0, 1, 2, 3].map((rank) => ({ event: 'result', job: 'J2', rank, pid: 20 + rank, expr: 'x', text: String(rank === 3 ? 7 : rank % 2), type: 'int', number: rank === 3 ? 7 : rank % 2 })),
    { event: 'compare', per: { dp: 0 }, groups: [{ ranks: [0], text: '0' }, { ranks: [1], text: '1' }], at: null },
    { event: 'compare', per: { dp: 1 }, groups: [{ ranks: [2], text: '0' }, { ranks: [3], text: '7' }], at: null },
];
const PER3 = [
    ...[0, 1, 2, 3, 4, 5].map((rank) => ({ event: 'result', job: 'J3', rank, pid: 30 + rank, expr: 'lr', text: rank === 4 ? '0.2' : '0.1', type: 'float', number: rank === 4 ? 0.2 : 0.1 })),
    { event: 'compare', per: { tp: 0 }, groups: [{ ranks: [0, 2, 4], text: '0.1' }], at: null },
    { event: 'compare', per: { tp: 1 }, groups: [{ ranks: [1, 3], text: '0.1' }, { ranks: [5], text: '0.2' }], at: null },
];

describe('core/compare within a dimension', () => {
    it('reads one set of groups per value of the dimension, each marked with its set, odd within its set', () => {
        const view = readCompare(PER3, 'lr');
        assert.deepEqual(view.groups.map((g) => [g.per, g.ranks, g.odd]), [
            ['tp=0', [0, 2, 4], false],
            ['tp=1', [1, 3], false],
            ['tp=1', [5], true],
        ]);
        assert.deepEqual(view.odd, [5]);
        // Two groups of one in each set: no majority, none odd.
        assert.deepEqual(readCompare(PER, 'x').odd, []);
    });

    it('offers the job’s dimensions, says which one the view is within, and labels each group with its set', () => {
        const html = renderCompare(readCompare(PER3, 'lr'), { ...STATE, dims: ['dp', 'tp'], per: 'tp' }, l10n, NONCE);
        assert.match(html, /<select id="per">/);
        assert.match(html, /<option value="tp" selected>within each tp<\/option>/);
        assert.match(html, /<option value="dp">within each dp<\/option>/);
        assert.match(html, /compared within each tp/);
        assert.match(html, /<span class="per">tp=1<\/span><span class="ranks">rank 5<\/span>/);
        assert.match(html, /2 sets compared apart; odd one out: rank 5/);
        // A job without coordinates: no choice to offer.
        assert.doesNotMatch(renderCompare(readCompare(PER3, 'lr'), STATE, l10n, NONCE), /<select/);
        const equal = readCompare([...PER3.slice(0, 6), PER3[6], { event: 'compare', per: { tp: 1 }, groups: [{ ranks: [1, 3, 5], text: '0.1' }] }], 'lr');
        assert.match(renderCompare(equal, { ...STATE, dims: ['tp'], per: 'tp' }, l10n, NONCE), /Equal within each of the 2 sets/);
    });
});

describe('core/compareHtml', () => {
    const view: CompareView = readCompare(WEIGHT, 'weight');
    const html = renderCompare(view, STATE, l10n, NONCE);

    it('shows the groups, the largest first, the smaller one highlighted with where it differs', () => {
        const groups = [...html.matchAll(/<div class="group( odd)?" data-ranks="([^"]*)">/g)].map((m) => [m[2], Boolean(m[1])]);
        assert.deepEqual(groups, [['0,1,3', false], ['2', true]]);
        const odd = html.slice(html.indexOf('<div class="group odd"'));
        assert.match(text(odd), /rank 2 odd one out/);
        assert.match(odd, /differs from rank 0 at element 1234 \[19, 18\]/);
        assert.match(text(html), /2 groups of values; odd one out: rank 2/);
        assert.equal((html.match(/class="make-group/g) ?? []).length, 2);
        assert.match(html, /data-group="1"/);
    });

    it('highlights the odd ranks’ rows in the table and marks the rank compared from', () => {
        const rows = [...html.matchAll(/<tr( class="(\w+)")? data-rank="(\d)">/g)].map((m) => [Number(m[3]), m[2] ?? '']);
        assert.deepEqual(rows, [[0, ''], [1, ''], [2, 'odd'], [3, '']]);
        assert.match(html, /<td class="rank from"[^>]*>0<\/td>/);
        assert.match(text(html), /\[64, 64\] torch\.float32 -4\.09374 4\.10149 -0\.00963019 63\.5716 0 0 cb80add3/);
    });

    it('counts NaNs in red, with a red bar in the sparkline', () => {
        const grad = renderCompare(readCompare(GRAD, 'grad'), { ...STATE, title: 'Compare: grad' }, l10n, NONCE);
        assert.match(grad, /<tr class="odd" data-rank="1">.*?<td class="num nan bad">1<\/td>/);
        assert.match(grad, /<rect class="bad" data-rank="1"/);
        assert.match(grad.slice(grad.indexOf('<div class="group odd"')), /^[^]*?<span class="bad">nan 1<\/span>/);
        assert.doesNotMatch(grad, /<rect class="bad" data-rank="[023]"/);
        assert.match(grad, /<svg class="line" data-metric="mean"/);
    });

    it('draws a sparkline bound by the minimum and maximum, flat across the middle when all are equal', () => {
        const svg = sparkSvg({ metric: 'value', points: [0, 1, 2].map((rank) => ({ rank, value: rank === 2 ? 10 : 0, bad: false, odd: rank === 2 })) }, l10n);
        const cy = [...svg.matchAll(/cy="([\d.]+)"/g)].map((m) => Number(m[1]));
        assert.deepEqual(cy, [32, 32, 4]);
        assert.match(svg, /<circle class="odd" data-rank="2"/);
        assert.match(svg, /<polyline points="4\.0,32\.0 80\.0,32\.0 156\.0,4\.0"\/>/);
        const flat = sparkSvg({ metric: 'value', points: [0, 1].map((rank) => ({ rank, value: 5, bad: false, odd: false })) }, l10n);
        assert.deepEqual([...flat.matchAll(/cy="([\d.]+)"/g)].map((m) => Number(m[1])), [18, 18]);
        // A gap where a rank has no value: two lines, not one across it.
        const gap = sparkSvg({ metric: 'value', points: [1, null, 2, 3].map((value, rank) => ({ rank, value, bad: value === null, odd: false })) }, l10n);
        assert.equal((gap.match(/<polyline/g) ?? []).length, 1);
        assert.match(gap, /<rect class="bad" data-rank="1"/);
    });

    it('says all equal with one group, and shows errors per rank', () => {
        const one = readCompare(
            [
                { event: 'result', rank: 0, text: '1', type: 'int', number: 1 },
                { event: 'result', rank: 1, text: '1', type: 'int', number: 1 },
                { event: 'error', rank: 2, message: 'ZeroDivisionError: division by zero', line: 3 },
                { event: 'compare', groups: [{ ranks: [0, 1], text: '1' }] },
            ],
            'x',
        );
        const page = renderCompare(one, { ...STATE, tolerance: 0.01 }, l10n, NONCE);
        assert.match(text(page), /All 2 ranks equal/);
        assert.match(page, /<tr class="error" data-rank="2">.*error: ZeroDivisionError: division by zero \(line 3\)/);
        assert.match(text(page), /2 ranks answered, 1 failed/);
        assert.match(page, /id="tolerance" [^>]*value="0\.01"/);
        assert.match(text(page), /within 0\.01/);
    });

    it('escapes values from the ranks and keeps a strict CSP with one nonce', () => {
        const evil = readCompare([{ event: 'result', rank: 0, text: '<img src=x onerror=alert(1)>', type: 'str' }, { event: 'error', rank: 1, message: '"><script>x()</script>' }, { event: 'compare', groups: [{ ranks: [0], text: '<img src=x onerror=alert(1)>' }] }], '<b>');
        const page = renderCompare(evil, { ...STATE, title: 'Compare: <b>' }, l10n, NONCE);
        assert.doesNotMatch(page, /<img|<b>|<script>x/);
        assert.match(page, /default-src 'none'; style-src 'nonce-abcdefghijklmnopqrstuv=='; script-src 'nonce-abcdefghijklmnopqrstuv=='/);
        assert.equal((page.match(/<script/g) ?? []).length, 1);
        assert.throws(() => renderCompare(evil, STATE, l10n, 'short'));
    });

    it('shows the last view below a busy line or an error', () => {
        const busy = renderCompare(view, { ...STATE, busy: 'Evaluating weight in every rank…' }, l10n, NONCE);
        assert.match(busy, /<div class="status busy">Evaluating weight in every rank…<\/div>/);
        assert.match(busy, /data-ranks="0,1,3"/);
        const failed = renderCompare(undefined, { ...STATE, error: 'no job J1' }, l10n, NONCE);
        assert.match(failed, /<div class="status error">no job J1<\/div>/);
        assert.doesNotMatch(failed, /<table/);
    });
});
