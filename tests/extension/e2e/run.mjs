// End-to-end suite on a real VS Code: code-server (from npm) driven by Playwright in Debian's
// Chromium (shared/e2e-real-vscode.md). Installs dist/rankdebug.vsix, opens a workspace with
// examples/train.sh + train.py and the scenarios' scripts, and runs the scenarios in this
// order, each one module under scenarios/ that says what it checks:
//   rightclick (rightClick.mjs), jobs (jobsView.mjs), foreign (foreignJob.mjs), armed
//   (armedEval.mjs), armui (armedFromEditor.mjs), together (together.mjs), together2
//   (togetherMore.mjs), compare (compare.mjs), compareroutes (compareRoutes.mjs), whystuck
//   (whyStuck.mjs), sessioncap (sessionCap.mjs), perclass (perClass.mjs), coords (coords.mjs),
//   started (startedRanks.mjs), ray (ray.mjs), scale (scale.mjs), multinode (multinode.mjs),
//   shim (terminalShim.mjs), last (lastCommand.mjs), launchjson (launchJson.mjs), smoke
//   (smoke.mjs), codelens (codeLens.mjs).
// This file is the runner: code-server and the browser up, the scenarios chosen
// (RANKDEBUG_E2E_ONLY=jobs,foreign runs only those), one `ok:` line per scenario with its
// timings, the logs kept, no process left. What the scenarios share: helpers.mjs.
// Screenshots and logs go to .artifacts/e2e/. Env: RANKDEBUG_E2E_PYTHON (default .venv/bin/python);
// RANKDEBUG_E2E_DOCS=1 refreshes the README's pictures under docs/ (or a list of their names:
// RANKDEBUG_E2E_DOCS=stack-tree,compare-panel).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { chromium } from 'playwright-core';
import { ROOT, ART, TRACE, VSIX, PYTHON, say, sleep, waitFor, provision, makeWorkspace, startCodeServer, stopGroup, shot, jobProcesses, palette, openFile, showFile, goToLine, setBreakpoint, commandLine, rowMenu, pickMenuItem, frameRow, expandMainThreads, waitGroups, shownAt, stopDebugging, webviewWith, openJobsView, jobsPane, docs, rankSubtrees, sideBarWidth, stacksFrame, rankPids, processes } from './helpers.mjs';
import { scenarioRightClick } from './scenarios/rightClick.mjs';
import { scenarioJobsView } from './scenarios/jobsView.mjs';
import { scenarioForeignJob } from './scenarios/foreignJob.mjs';
import { scenarioArmedEval } from './scenarios/armedEval.mjs';
import { scenarioArmedFromEditor } from './scenarios/armedFromEditor.mjs';
import { scenarioTogether } from './scenarios/together.mjs';
import { scenarioTogetherMore } from './scenarios/togetherMore.mjs';
import { scenarioCompare } from './scenarios/compare.mjs';
import { scenarioCompareRoutes } from './scenarios/compareRoutes.mjs';
import { scenarioWhyStuck } from './scenarios/whyStuck.mjs';
import { scenarioSessionCap } from './scenarios/sessionCap.mjs';
import { scenarioPerClass } from './scenarios/perClass.mjs';
import { scenarioCoords } from './scenarios/coords.mjs';
import { scenarioStartedRanks } from './scenarios/startedRanks.mjs';
import { scenarioRay } from './scenarios/ray.mjs';
import { scenarioScale } from './scenarios/scale.mjs';
import { scenarioMultinode } from './scenarios/multinode.mjs';
import { scenarioTerminalShim } from './scenarios/terminalShim.mjs';
import { scenarioLastCommand } from './scenarios/lastCommand.mjs';
import { scenarioLaunchJson } from './scenarios/launchJson.mjs';
import { scenarioSmoke } from './scenarios/smoke.mjs';
import { scenarioCodeLens } from './scenarios/codeLens.mjs';

const results = [];

async function main() {
    fs.rmSync(ART, { recursive: true, force: true });
    fs.mkdirSync(ART, { recursive: true });
    process.env.RANKDEBUG_TRACE_FILE = TRACE; // code-server, and so every job, inherits it
    if (!fs.existsSync(VSIX)) throw new Error(`${VSIX} is missing: run npm run package first`);
    if (!fs.existsSync(PYTHON)) throw new Error(`${PYTHON} is missing: run bash scripts/setup.sh first`);
    const { codeServer, node24 } = provision();
    const base = fs.mkdtempSync('/tmp/rankdebug-e2e-');
    const { ws, bpLine, cmdLine } = makeWorkspace(base);
    let server;
    let context;
    let page;
    let failed = false;
    try {
        server = await startCodeServer(codeServer, node24, base, ws);
        const tBrowser = Date.now();
        context = await chromium.launchPersistentContext(path.join(base, 'chromium'), {
            executablePath: process.env.RANKDEBUG_CHROMIUM ?? '/usr/bin/chromium',
            headless: true,
            viewport: { width: 1600, height: 1000 },
            args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
        });
        page = context.pages()[0] ?? (await context.newPage());
        page.setDefaultTimeout(60000);
        await page.goto(`http://127.0.0.1:${server.port}/?folder=${encodeURIComponent(ws)}`);
        await page.locator('.monaco-workbench').waitFor({ timeout: 90000 });
        say(`workbench up in ${Date.now() - tBrowser} ms`);
        // RANKDEBUG_E2E_ONLY=jobs,foreign runs only those scenarios (while working on them).
        const only = (process.env.RANKDEBUG_E2E_ONLY ?? '').split(',').filter(Boolean);
        const want = (name) => !only.length || only.includes(name);
        if (want('rightclick')) {
            const r1 = await scenarioRightClick(page, ws, bpLine);
            results.push(`right-click → rank 1 paused: ${r1.pausedMs} ms; from the quick-pick's answer ${r1.afterPickMs} ms, ${(r1.afterPickMs / r1.plainMs).toFixed(2)}× a plain run reaching the line (${r1.plainMs} ms)`);
        }
        if (want('jobs')) {
            await scenarioJobsView(page, ws, bpLine, cmdLine);
            results.push('Training Jobs view: attach to a job started outside VS Code');
        }
        if (want('foreign')) {
            const r3 = await scenarioForeignJob(page, ws);
            results.push(`plain torchrun job: listed; Show Stacks rendered in ${r3.stacksMs} ms; Attach → rank 1 paused in ${r3.attachMs} ms`);
        }
        if (want('armed')) {
            const r4 = await scenarioArmedEval(page, ws);
            results.push(`armed job: Evaluate in Rank → the Eval channel shows rank 1's value (${r4.ms} ms, typing included)`);
        }
        if (want('armui')) {
            const r5 = await scenarioArmedFromEditor(page, ws);
            results.push(`armed from the editor: job listed armed ${r5.armedMs} ms after Enter; Attach (clicked twice) → one rank 1 session, at the breakpoint in ${r5.attachMs} ms; stop left no process`);
        }
        if (want('together')) {
            const r6 = await scenarioTogether(page, ws);
            results.push(
                `ranks together: ranks 0,1 debugged; rank 0 at the breakpoint → both shown paused in ${r6.pausedMs} ms after the quick-pick; Step Over All Ranks → rank 0 on the next line, rank 1 reported waiting in all_reduce (${r6.stepMs} ms); a breakpoint bound to rank 1 → Continue All Ranks → rank 1 alone at it in ${r6.boundMs} ms; Continue All Ranks → both running in ${r6.continueMs} ms; stop left no process`,
            );
        }
        if (want('together2')) {
            const r7 = await scenarioTogetherMore(page, ws);
            results.push(
                `ranks together, more: no breakpoint; Run Chosen Ranks to Cursor → both ranks paused on the line in ${r7.runToMs} ms (rank 1 2 s late), no breakpoint left there; Continue All Ranks → both running in ${r7.continueMs} ms; rank 1 raises → paused on the exception, rank 0 with it in all_reduce, in ${r7.crashMs} ms; 6 s later (3 s collective timeout) both still paused, processes alive, Debug Console: loss → 7.25; stop left no process; ${r7.totalMs} ms in all`,
            );
        }
        if (want('compare')) {
            const r8 = await scenarioCompare(page, ws);
            results.push(
                `compare across ranks: rank 0 debugged, every rank armed, paused in ${r8.pausedMs} ms; Show Stacks → the tree branches into rank 0 (odd) and ranks 1-3 in all_reduce, shown ${r8.stacksMs} ms after the click; Variables → weight → Compare Across Ranks → groups [0,1,3] [2] (rank 2 odd, element 1234 [19, 18]) shown ${r8.weightMs} ms after the click; Make a group → group commands on rank 2; grad from the Debug Console → NaN on rank 1 (red) in ${r8.gradMs} ms; tolerance 1e-2 → one group in ${r8.toleranceMs} ms; stop left no process`,
            );
        }
        if (want('compareroutes')) {
            const helpers = { say, sleep, waitFor, palette, openFile, showFile, goToLine, rowMenu, pickMenuItem, frameRow, expandMainThreads, waitGroups, shownAt, shot, stopDebugging, jobProcesses };
            const r = await scenarioCompareRoutes(page, ws, helpers);
            results.push(`compare routes: Watch → weight → Compare Across Ranks → [0,1,3] [2] shown ${r.watchMs} ms after the click; editor selection grad → Compare Across Ranks → [0,2,3] [1] (NaN on rank 1) in ${r.selectionMs} ms; stop left no process`);
        }
        if (want('whystuck')) {
            const helpers = { say, sleep, waitFor, palette, commandLine, rowMenu, shot, webviewWith, waitGroups, openJobsView, jobsPane, stopDebugging, jobProcesses, docs, ROOT };
            const r = await scenarioWhyStuck(page, ws, helpers);
            results.push(`why stuck: rankdebug.hangSeconds 5 → the hang notification naming rank 3 ${r.noticeMs} ms after Enter; Why Is This Job Stuck? → the panel (rank 3's class the culprit, ranks 0-2 in all_reduce #4, group 0 at #4 against #3) ${r.panelMs} ms after the click; the finding's link opened the barrier's line; Debug culprit → rank 3's session in ${r.culpritMs} ms; Debug one per class → rank 0 · 2 like it; Compare across classes → ranks 0 and 3 apart in ${r.compareMs} ms; stop left no process`);
        }
        if (want('sessioncap')) {
            const helpers = { say, sleep, waitFor, palette, openFile, showFile, goToLine, setBreakpoint, commandLine, rowMenu, rankSubtrees, expandMainThreads, sideBarWidth, openJobsView, jobsPane, shot, stopDebugging, jobProcesses, docs, ROOT };
            const r = await scenarioSessionCap(page, ws, helpers);
            results.push(`session cap: rankdebug.maxSessions 2, ranks 0-3 → two rank sessions, all four paused ${r.pausedMs} ms after the quick-pick; Open Session on rank 3 (all stopped) → its session, past the cap, in ${r.openPausedMs} ms; Continue All Ranks → all four running in ${r.continueMs} ms, two sessions again in ${r.trimMs} ms; Open Session on a running rank → its session in ${r.openRunningMs} ms, still two; Pause All Ranks → all four paused in ${r.pauseMs} ms; stop left no process`);
        }
        if (want('perclass')) {
            const helpers = { say, sleep, waitFor, palette, rowMenu, shot, openJobsView, jobsPane, stacksFrame, rankPids, processes, stopDebugging, docs, ROOT, ART, PYTHON };
            const r = await scenarioPerClass(page, ws, helpers);
            results.push(`per class: a plain torchrun found running and watched (rankdebug.hangSeconds 5) → the hang notification naming rank 3 ${r.noticeMs} ms after Training Jobs was shown; Show Stacks → ranks 0-2 and rank 3 apart in ${r.stacksMs} ms; Debug this class on ranks 0-2 → rank 0 · 2 like it in ${r.classMs} ms; Debug one rank per class → rank 3 too in ${r.perClassMs} ms, one session per class; detached, the job ended → its watcher ended`);
        }
        if (want('coords')) {
            const helpers = { say, sleep, waitFor, palette, commandLine, rowMenu, shot, openJobsView, jobsPane, jobProcesses, waitGroups, webviewWith, docs, ROOT };
            const r = await scenarioCoords(page, ws, helpers);
            results.push(`coords: ${JSON.stringify(r)}`);
        }
        if (want('started')) {
            const helpers = { say, waitFor, openFile, setBreakpoint, commandLine, rowMenu, rankSubtrees, expandMainThreads, shot, stopDebugging, jobProcesses };
            const r = await scenarioStartedRanks(page, ws, helpers);
            results.push(`started: a command whose rank count is not known → Choose when the ranks start → the pick filled with ranks 0 and 1 (Fabric's copy) ${r.fillMs} ms after the choice → rank 1 checked → paused at its breakpoint ${r.pausedMs} ms after Enter; 1 typed ${r.typedEarly ? 'before rank 1 started' : 'after rank 1 started'} → rank 1 paused ${r.standingMs} ms after the choice; stop left no process`);
        }
        if (want('ray')) {
            const r10 = await scenarioRay(page, ws);
            results.push(`Ray: right-click a verl-shaped driver → ranks 1,2 typed → both actor ranks paused in ${r10.pausedMs} ms; stop left no process (raylet, GCS, workers)`);
        }
        if (want('scale')) {
            const r = await scenarioScale(page, ws);
            results.push(`scale: the quick-pick of 1,024 ranks shown ${r.pickMs} ms after the menu click (node separators), filtered to "rank 1000" in ${r.filterMs} ms; Training Jobs, opened, listed a ${r.nRanks}-rank job in ${r.rowMs} ms and drew its ranks grouped ${r.viewMs} ms after the click, of which the refresh (rankdebug jobs, rows, VS Code's asks) ${r.refreshMs} ms`);
        }
        if (want('multinode')) {
            const h = { say, sleep, waitFor, openFile, setBreakpoint, commandLine, rowMenu, shot, stopDebugging, rankSubtrees, stopGroup, PYTHON, ROOT, VSIX, ART };
            const r = await scenarioMultinode(h, codeServer, node24);
            results.push(r.skipped ? `multinode: not run (${r.skipped})` : `multinode: right-click a 2-node torchrun (rankdebug.hosts: node1) → ranks 1 (node 0) and 3 (node 1) paused in ${r.pausedMs} ms; stop left nothing on either node`);
        }
        if (want('shim')) {
            await scenarioTerminalShim(page, ws, bpLine);
            results.push('terminal: rankdebug torchrun ... attached rank 1; stop ended the job');
        }
        if (want('last')) {
            await scenarioLastCommand(page);
            results.push('terminal: a failed training command is offered for debugging');
        }
        if (want('launchjson')) {
            await scenarioLaunchJson(page, ws, cmdLine);
            results.push('Generate launch.json: rankdebug and debugpy configurations written');
        }
        if (want('smoke')) {
            const r9 = await scenarioSmoke(page, ws);
            results.push(`smoke run: the Smoke run lens → the diff (5000 iterations → a few, the user's file unchanged) in ${r9.diffMs} ms; Debug → rank 1 of the smoke command paused in ${r9.debugMs} ms; stop left no process`);
        }
        if (want('codelens')) {
            await scenarioCodeLens(page, ws, bpLine);
            results.push('code lens ▶ Debug with the remembered ranks');
        }
    } catch (e) {
        failed = true;
        console.error(`[e2e] FAILED: ${e instanceof Error ? e.stack : e}`);
        if (page) await shot(page, 'failure');
    } finally {
        if (page) await shot(page, 'last');
        await context?.close().catch(() => undefined);
        stopGroup(server?.proc);
        await sleep(500);
        // Keep the extension's and code-server's logs with the screenshots.
        try {
            const logs = path.join(base, 'user', 'logs');
            if (fs.existsSync(logs)) fs.cpSync(logs, path.join(ART, 'logs'), { recursive: true });
            for (const run of fs.readdirSync(path.join(ART, 'logs'))) {
                const file = path.join(ART, 'logs', run, 'exthost1', 'rankdebug.rankdebug', 'Rank Debugger.log');
                if (!fs.existsSync(file)) continue;
                const text = fs.readFileSync(file, 'utf8');
                const act = /activate\(\) returned in (\d+) ms/.exec(text)?.[1];
                const full = /activated in (\d+) ms/.exec(text)?.[1];
                if (act) results.push(`activation: activate() ${act} ms; with the language server ready ${full ?? '?'} ms`);
            }
        } catch {
            // best effort
        }
        const left = await waitFor('no process left', () => (jobProcesses(base).length ? false : []), 15000).catch(() => jobProcesses(base));
        if (left.length) {
            console.error(`[e2e] processes left: ${left.join('; ')}`);
            failed = true;
        }
        fs.rmSync(base, { recursive: true, force: true });
    }
    for (const r of results) say(`ok: ${r}`);
    say(failed ? 'FAILED (screenshots and logs in .artifacts/e2e)' : 'passed');
    fs.writeFileSync(path.join(ART, 'summary.txt'), `${results.join('\n')}\n${failed ? 'FAILED' : 'passed'}\n`);
    process.exit(failed ? 1 : 0);
}

await main();
