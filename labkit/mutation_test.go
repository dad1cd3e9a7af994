package labkit

// Mutation table: each mutant is one small edit of the code that
// a green `make test` must notice; "killed by" names the test that fails on
// it. The edits themselves are in mutants below. TestMutantTable checks,
// on every run, that each edit still applies to the code (its text occurs
// exactly once) and that this table lists it; the slow check that re-applies
// each mutant (through go test's -overlay, never touching the tree) and runs
// its killing test is opt-in (about three minutes for all):
//
//	SYNCLAB_MUTANTS=1 go test -count=1 -run TestMutants -timeout 1h ./labkit/
//	SYNCLAB_MUTANTS=1 go test -count=1 -run 'TestMutants/esp32-cpu-swap' ./labkit/
//
// scripts/mutants.sh runs them. SYNCLAB_MUTANTS=suite runs, for each, the
// whole suites of the mutated package and of the killing test's instead,
// and logs every test that fails. Tests that build the lab command with go
// build (labkit/cmd/lab's) do not see the overlay.
//
//	mutant                   what it breaks                                            file:function                                                 killed by
//	esp32-cpu-swap           cpu_core0_pct and cpu_core1_pct swapped                   platforms/esp32/experiments.go:csRunResult                    esp32 TestCSRunResultMapsEveryField
//	rk3399-p99-max           rk3399 p99 lock wait reports the maximum                  platforms/rk3399/experiments.go:metrics                       rk3399 TestMetricsFromACraftedRun
//	cache-code-version       the cache ignores the code version                        labkit/cache.go:Result.matches                                labkit TestCacheKeysOnCodeAndShard
//	hash-seed-repeats        the definition hash ignores seed and repeats              platforms/experiment.go:Experiment.Hash                       platforms TestHashAndDiffCoverWhatDeterminesTheRuns
//	ticket-no-sev            arm32 ticket unlock without SEV                           platforms/linux/locks.go:ticketLock.Unlock                    linux TestWaiterWakes
//	qspin-always-queue       qspinlock always queues (no pending-bit path)             platforms/linux/locks.go:qspinlock.slowpath                   linux TestQSpinlockPendingThenMCSQueue
//	tiered-never-wakes       the tiered policy's wait queue never wakes a sleeper      platforms/linux/wait.go:Kernel.wakeVar                        linux TestWaiterWakes
//	crosscore-latency-0      crosscore IPI delivered with no latency                   platforms/esp32/soc.go:SoC.crosscoreRaise                     esp32 TestCrosscoreLatencyDelaysTheWake
//	disinherit-held          disinherit ignores the other mutexes held                 platforms/esp32/queue.go:xTaskPriorityDisinherit              esp32 TestDisinheritWaitsForTheLastMutex
//	disinherit-timeout       disinherit after a timeout ignores the remaining waiters  platforms/esp32/queue.go:vTaskPriorityDisinheritAfterTimeout  esp32 TestDisinheritAfterTimeoutKeepsRemainingWaiters
//	sim-monitor-kept         another core's store leaves the exclusive monitor armed   sim/memory.go:Memory.clearMonitors                            sim TestSwap
//	sim-monitor-loss-off     Coherence.MonitorLoss is ignored                          sim/memory.go:Memory.access                                   sim TestMonitorLoss
//	sim-prefetch-upgrades    a prefetch for store upgrades a shared line on every core sim/isa.go:Core.prefetchStore                                sim TestPrefetchStore
//	sim-same-write-changes   a store of the value already there counts as a change     sim/memory.go:Memory.wrote                                    sim TestSameValueWritesChangeNothing
//	sim-stream-edge          a WFE starting on an event-stream tick wakes at once      sim/isa.go:Core.nextStreamTick                                sim TestEventStreamNextTick
//	sim-port-parallel        the uncached (SRAM) port serves accesses in parallel      sim/memory.go:Memory.grant                                    sim TestUncachedPortArbitration
//	sim-ffwd-extra-period    fast-forward skips k+1 periods                            sim/ffwd.go:ffwd.match                                        sim TestFastForwardExact
//	sim-hist-bucket          histogram bucket index off by one                         sim/stats.go:bucketOf                                         sim TestHistogramBuckets
//	sim-percentile-n         percentile rank from n instead of n-1                     sim/stats.go:type7                                            sim TestPercentileMatchesNumPy
//	sim-ties-lifo            events due at one time fire last-scheduled first          sim/engine.go:entry.less                                      sim TestEventTiesFireInScheduleOrder
//	sim-cancel-rare          the run's context checked every million events            sim/engine.go:checkEvery                                      sim TestCancelPrompt
//	param-integer            an Integer parameter accepts fractions                    platforms/param.go:Param.Check                                platforms TestSetFrom
//	settings-garbage         -set key=value accepts trailing garbage                   platforms/experiment.go:Experiment.WithSettings               platforms TestWithSettingsAndVariants
//	portmux-any-owner        portMUX takes a lock held by the other core as nested     platforms/esp32/port.go:Kernel.enterCritical                  esp32 TestMutualExclusionSeeds
//	esp32-timeout-late       a blocking call's timeout one tick late                   platforms/esp32/tasks.go:Kernel.block                         esp32 TestTakeTimeoutExactTicks
//	esp32-api-swap           spinlock_cycles and s32c1i_cycles swapped                 platforms/esp32/experiments.go:apiPaths                       esp32 TestAPIPathsMetricsFromTheRun
//	ncore-last-cluster       NCore's last cluster always full                          platforms/generic/soc.go:NCore                                generic TestNCoreTopology
//	nohz-tick-runs           NO_HZ_IDLE does not stop the idle tick                    platforms/linux/kernel.go:Kernel.idle                         linux TestTickAndIdle
//	split-percluster         per-cpu-split's percluster built as percpu                platforms/rk3399/experiments.go:runSplit                      rk3399 TestSplitVariantsContendAsTheirLocksAreShared
//	scaling-wait-ignored     lock-scaling ignores its wait parameter                   platforms/rk3399/experiments.go:scalingWorkload               rk3399 TestLockScalingWaitPolicies
//	student-t-df-n           Student-t interval with n degrees of freedom, not n-1     labkit/stats.go:Summarize                                     labkit TestSummarizeKnownValues
//	fieller-sign             Fieller interval centred on -ratio                        labkit/stats.go:RatioCI                                       labkit TestRatioCI
//	journal-crc              journal records taken without their CRC checked           labkit/journal.go:nextFrame                                   labkit TestJournalTornOrForeignRecords
//	merge-duplicate          merge does not name a shard given twice                   labkit/store.go:Merge                                         labkit TestShardsPartitionJobs
//	cache-shard              a cached shard stands for the whole result                labkit/cache.go:Result.matches                                labkit TestCacheKeysOnCodeAndShard
//	seed-ignores-repeat      every repeat gets the same run seed                       labkit/runner.go:RunSeed                                      labkit TestRunSeedsDistinct
//	seed-follows-position    a run's seed follows its point's place in the sweep        labkit/runner.go:batch.run                                    labkit TestPointResultsIgnoreTheSweep
//	claims-one-seed          a claim calls a direction from one seed per variant        labkit/reference.go:Claim.verdict                             labkit TestClaimsFromOneSeed
//	csv-repeat-column        the CSV's repeat column holds the point                   labkit/export.go:Result.WriteCSV                              labkit ExampleResult_WriteCSV
//	doc-n-counts-failed      a JSON cell's n counts its failed runs                    labkit/export.go:NewRunDoc                                    labkit TestRunDocAndCSVAgree
//	decode-repeated-run      a result file repeating a run is accepted                 labkit/decodecheck.go:Result.check                            labkit TestDecodeValidatesTheResult
//	ledger-irq-inverted      esp-table-irq's verdict inverted                          labkit/ledger/esp32.go:esp32Judges                            ledger TestVerdictsFollowTheNumbers
//	ledger-within-one-sided  within(a, b, f) checks one side only                      labkit/ledger/judge.go:within                                 ledger TestVerdictsFollowTheNumbers
//	cache-hides-failures     a cached result with failed runs returns no error          labkit/cache.go:RunExperiment                                 labkit TestFailedRunsAreJournaledCachedAndMerged
//	journal-skips-failed     failed runs are not journaled (recomputed on resume)      labkit/runner.go:batch.run                                    labkit TestFailedRunsAreJournaledCachedAndMerged
//	sim-wfe-power            WFE drawn at WFI's power                                  sim/core.go:Core.PowerMW                                      sim TestEnergyFromConfiguredPowers
//	sim-residency-closed     Residency leaves out the state the core is in             sim/core.go:Core.Residency                                    sim TestResidencyMidRun
//	sim-mask-lowers          Mask can lower the interrupt level                        sim/proc.go:Proc.Mask                                         sim TestMaskNeverLowersLevel
//	sim-wfi-uncounted        a WFI woken by an interrupt is not counted                sim/proc.go:Proc.WFI                                          sim TestWFICountsInterruptWakeup
//	sim-quiet-ticks          a deadlock with only ticks left is found a million late   sim/engine.go:Engine.run                                      sim TestDeadlockWithOnlyTicksLeft
//	sim-idle-exit-free       leaving an idle state costs no exit latency               sim/proc.go:Proc.Idle                                         sim TestIdleExitLatency
//	esp32-disinherit-two     disinherit after a timeout while holding two mutexes      platforms/esp32/queue.go:vTaskPriorityDisinheritAfterTimeout  esp32 TestDisinheritAfterTimeoutKeepsPriorityWithOtherMutexHeld
//	esp32-equal-preempts     waking an equal-priority task preempts the running one    platforms/esp32/tasks.go:Kernel.makeReady                     esp32 TestEqualPriorityWakeDoesNotPreempt
//	esp32-release-early      portMUX shown free before the holder's owed cycles ran    platforms/esp32/port.go:Kernel.release                        esp32 TestSpinOnHeldLockCountsAsContended
//	esp32-reason-kept        the crosscore ISR leaves its reason word set              platforms/esp32/crosscore.go:Kernel.crosscoreISR              esp32 TestCrosscoreISRClearsReason
//	esp32-tick-core1         core 1's tick counts the ticks                            platforms/esp32/tasks.go:Kernel.sysTickHandler                esp32 TestTickCountAdvancesWhileCore1Masked
//	linux-polls-plus-one     adaptive and tiered poll once more than spin_limit        platforms/linux/wait.go:Kernel.policy                         linux TestPollsBeforeWFE
//	linux-tier-extra-wfe     the tiered policy sleeps in WFE once more than wfe_limit  platforms/linux/wait.go:Kernel.tier                           linux TestTieredWFEWakeupsBeforeSchedule
//	linux-cmpwait-inverted   __cmpwait sleeps when the word has changed                platforms/linux/wait.go:Kernel.condLoad                       linux TestTieredWFEWakeupsBeforeSchedule
//	linux-no-recheck         no re-check after queueing for schedule(): lost wake-up   platforms/linux/wait.go:Kernel.condLoad                       linux TestTieredRecheckAfterQueueing
//	linux-redundant-sev-off  the redundant SEV is never sent                           platforms/linux/wait.go:Kernel.release                        linux TestRedundantSEVWakesEveryCore
//	linux-idle-shallowest    cpuidle picks the shallowest fitting state                platforms/linux/kernel.go:Kernel.idle                         linux TestCpuidlePicksDeepestFittingState
//	sim-ffwd-until           fast-forward jumps past the run's time limit              sim/ffwd.go:ffwd.match                                        sim TestFastForwardHonoursLimits
//	sim-prefetch-shared      PRFM PSTL1STRM takes the line shared, not owned           sim/isa.go:Core.prefetchStore                                 sim TestPrefetchStore
//	sim-acquire-no-prefetch  Acquire's attempts skip the prefetch they are given       sim/condwait.go:Proc.Acquire                                  sim TestAcquireMatchesExplicitLoop
//	linux-llsc-no-prefetch   the kernel's LL/SC atomics without prfm pstl1strm         platforms/linux/wait.go:Kernel.llsc                           linux TestUncontendedAcquireIsOneTransfer
//	sim-ffwd-maxevents       fast-forward jumps past the event budget                  sim/ffwd.go:ffwd.match                                        sim TestFastForwardHonoursLimits
//	sim-ffwd-unseen-proc     a process that ran without a loop head still matches      sim/ffwd.go:ffwd.match                                        sim TestFastForwardRefusesWhatItCannotSee
//	sim-ffwd-hist-values     periods adding different histogram values match           sim/ffwd.go:ffwd.match                                        sim TestFastForwardRefusesWhatItCannotSee
//	sim-ffwd-recall-any      a known step is recalled after a period of any step       sim/ffwd.go:ffwd.matchKnown                                   sim TestFastForwardRecall
//	sim-ffwd-epoch-moves     periods that move an epoch count are skipped              sim/ffwd.go:ffwd.match                                        sim TestFastForwardRecall
//	sim-spin-last-stall      the poll that ends a spin adds no memory stall            sim/spin.go:Core.poll                                         sim TestSpinStallIsFirstAndLastRead
//	sim-oneshot-period       OneShot after Periodic keeps the period                   sim/irq.go:Timer.OneShot                                      sim TestTimersDevicesAndIPIsFireOnTime
//	sim-trace-touch          a span ending at the window's start is kept               sim/trace.go:Trace.Add                                        sim TestTraceAddClipsToTheHalfOpenWindow
//	sim-trace-max            a trace keeps Max+1 spans                                 sim/trace.go:Trace.Add                                        sim TestTraceAddClipsToTheHalfOpenWindow
//	validate-repeats         a definition with zero repeats is valid                   platforms/experiment.go:Experiment.Validate                   platforms TestValidateRejectsEachInconsistency
//	validate-sweep-twice     a sweep value given twice is valid                        platforms/experiment.go:Experiment.Validate                   platforms TestValidateRejectsEachInconsistency
//	variants-twice           WithVariants accepts a variant named twice                platforms/experiment.go:Experiment.WithVariants               platforms TestWithVariantsOrderAndRepeat
//	esp32-worst-tie-last     worst-latency split from the last of tied interrupts      platforms/esp32/experiments.go:csRunResult                    esp32 TestWorstIRQSplitIsTheFirstOfTies
//	esp32-notify-no-wrap     eIncrement carries into bit 32 instead of wrapping        platforms/esp32/notify.go:Kernel.notifyLocked                 esp32 TestNotifyIncrementWrapsToAnEmptyCount
//	esp32-give-overfill      a give to a full semaphore succeeds                       platforms/esp32/queue.go:Kernel.xQueueGenericSend             esp32 TestGiveToAFullSemaphoreFails
//	esp32-isr-give-overfill  a give from an ISR to a full semaphore succeeds           platforms/esp32/queue.go:Kernel.xSemaphoreGiveFromISR         esp32 TestGiveToAFullSemaphoreFails
//	esp32-counting-full      a counting semaphore created full is refused              platforms/esp32/queue.go:Kernel.NewSemaphore                  esp32 TestCountingSemaphoreCreatedFull
//	esp32-waitlist-resorted  inheriting a blocked task re-sorts its wait list          platforms/esp32/queue.go:Kernel.setPriority                   esp32 TestInheritanceKeepsTheWaitListOrder
//	esp32-pick-stays         the selected task is not moved to its list's tail         platforms/esp32/tasks.go:Kernel.pickNext                      esp32 TestBestEffortRoundRobin
//	esp32-pick-no-wait       a selection passes over a peer in transit                 platforms/esp32/tasks.go:Kernel.pickNext                      esp32 TestTimeSliceUnpinnedFair
//	esp32-insert-at-tail     a readied task always goes to its list's tail             platforms/esp32/tasks.go:Kernel.addReady                      esp32 TestReadiedAheadOfAWalkedList
//	esp32-tick-yields-other  core 0's tick yields core 1 for a task it readies         platforms/esp32/tasks.go:Kernel.sysTickHandler                esp32 TestTickWakeWaitsForOwnCoreTick
//	esp32-no-yield-pending   a wake that outranks the core leaves no yield pending     platforms/esp32/tasks.go:Kernel.makeReady                     esp32 TestYieldPendingTakenAtTick
//	esp32-delay0-noop        vTaskDelay(0) returns without yielding                    platforms/esp32/notify.go:TCB.Delay                           esp32 TestDelayZeroYields
//	rk3399-handoff-max       lock-scaling's handoff_ns reports the maximum             platforms/rk3399/experiments.go:runLockScaling                rk3399 TestLockScalingHandoffIsTheMean
//	rk3399-energy-one-core   a run's energy is the last core's alone                   platforms/rk3399/workload.go:run.result                       rk3399 TestEnergyCoversEveryUsedCore
//	cal-relres-zero          a measured zero divides by zero (NaN residual)            labkit/calibrate.go:relResidual                               labkit TestRelResidual
//	cal-relres-sign          residual sign flips for a negative measurement            labkit/calibrate.go:relResidual                               labkit TestRelResidual
//	cal-dof-ident            DOF counts parameters that trade off                      labkit/calibrate.go:calib.report                              labkit TestCalibrateDegreesOfFreedom
//	cal-t-df                 interval's Student t with one degree of freedom more      labkit/calibrate.go:calib.report                              labkit TestCalibrateIntervalsFromTheLinearizedModel
//	cal-int-round            an Integer interval rounded (narrowed), not widened       labkit/calibrate.go:calib.report                              labkit TestCalibrateIntegerIntervalWidened
//	cal-edge-zero            a value just inside Min/Max not flagged accepted          labkit/calibrate.go:calib.report                              labkit TestCalibrateOutside
//	cal-plausible-high-only  a value below its plausible Low not flagged               labkit/calibrate.go:calib.report                              labkit TestCalibrateOutside
//	cal-col-threshold        a parameter moving nothing reported as a trade-off        labkit/calibrate.go:calib.report                              labkit TestCalibrateDegreesOfFreedom
//	cal-int-step             Integer Jacobian step 0 for a narrow range (0/0)          labkit/calibrate.go:calib.report                              labkit TestCalibrateNarrowIntegerParameter
//	cal-resid-sort           residual table lists the best-fitting rows first          labkit/calibrate.go:Fit.ResidualTable                         labkit TestResidualTableWorstFirst
//	cal-choice-worst         a choice parameter takes the value that fits worst        labkit/calibrate.go:Calibrate                                 labkit TestCalibrateChoice
//	cal-choice-untested      no choice value is ever rejected (no F test)              labkit/calibrate.go:choose                                    labkit TestCalibrateChoice
//	sens-tornado-base        tornado change taken against the case, not baseline       labkit/sensitivity.go:Sensitivity.TornadoBars                 labkit TestSensitivityWhichParametersMoveTheConclusion
//	sens-tornado-sides       tornado bars' Low and High swapped                        labkit/sensitivity.go:Sensitivity.TornadoBars                 labkit TestSensitivityWhichParametersMoveTheConclusion
//	sens-baseline-failed     baseline failures give no failed-runs column              labkit/sensitivity.go:Sensitivity.Table                       labkit TestSensitivityTableBaselineFailures
//	sens-holds-nohold-text   A without runs reads unresolved, not no runs              labkit/sensitivity.go:Conclusion.Judge                        labkit TestSensitivityTableBaselineFailures
//	sens-judge-noise         a flip within the seeds' noise reads FAILS                labkit/sensitivity.go:Conclusion.Judge                        labkit TestConclusionJudge
//	num-sci-edge             Num(0.001) in scientific notation                         labkit/format.go:sigDigits                                    labkit TestFormatEdges
//	num-neg-group            Num(-123456) grouped as -,123,456                         labkit/format.go:groupThousands                               labkit TestFormatEdges
//	meanci-half-digit        MeanCI writes 100 ± 0.07 as 100 ± <0.1                    labkit/format.go:MeanCI                                       labkit TestFormatEdges
//	qty-rollover-top         999.96 GHz rolls over past G to a bare unit               labkit/format.go:Quantity                                     labkit TestFormatEdges
//	qty-no-clamp-top         Quantity above G drops the prefix (5e12 Hz: 5 Hz)         labkit/format.go:Quantity                                     labkit TestFormatEdges
//	qty-neg-rollover         -999.96 us shown as -1,000 µs, not -1 ms                  labkit/format.go:Quantity                                     labkit TestFormatEdges
//	rel-factor-edge          Relative(2, 1) says 100% higher, not 2x                   labkit/format.go:Relative                                     labkit TestFormatEdges
//	rel-factor-low-edge      Relative(0.5, 1) says 50% lower, not 2x                   labkit/format.go:Relative                                     labkit TestFormatEdges
//	sum-title-repeats        one-repeat summary titled as a 95% CI                     labkit/table.go:SummaryTable                                  labkit TestSummaryTableCells
//	sum-half-unscaled        half-width not rescaled with the row's unit               labkit/stats.go:Summary.Scale                                 labkit TestSummaryTableCells
//	fail-point0              failed run shown at the first sweep point                 labkit/table.go:FailuresTable                                 labkit TestFailuresTableNamesThePoint
//	claims-unit-sim-only     claims row unit ignores the article's values              labkit/table.go:ClaimsTable                                   labkit TestClaimsTableUnitFitsTheArticleToo
//	log-span-ge              log axis at exactly 30x, not beyond                       labkit/charts.go:useLog                                       labkit TestAxisTypes
//	colors-others-front      other series take the variants' colours                   labkit/colors.go:colorOf                                      labkit TestOtherSeriesTakeColoursFromThePaletteEnd
//	shard-parse-zero         -shard 0/0 accepted (runs everything)                     labkit/runner.go:ParseShard                                   labkit TestShardsPartitionJobs
//	tol-width-abs            tolerance negative for a negative published value         labkit/validate.go:Tolerance.Width                            labkit TestJudgeNegativePublished
//	valtab-bound             a bound's tolerance shown as ± 0                          labkit/validate.go:ValidationTable                            labkit TestValidationTableColumns
//	valtab-setfrom           table drops the parameters set from the source            labkit/validate.go:ValidationTable                            labkit TestValidationTableColumns
//	nb-unary                 -p cannot set a parameter declared as -3                  labkit/nbexport/params.go:literalType                         nbexport TestParameterValues
//	nb-bool-raw              -p On=1 writes bool = 1 (not Go)                          labkit/nbexport/params.go:Param.goValue                       nbexport TestParameterValues
//	nb-empty-list            -p Cs= refused instead of an empty slice                  labkit/nbexport/params.go:Param.goValue                       nbexport TestParameterValues
//	nb-setting-emptykey      -p =3 accepted with an empty name                         labkit/nbexport/params.go:ParseSetting                        nbexport TestParseSetting
//	nb-setting-trim          -p ' N =3' keeps the spaces in the name                   labkit/nbexport/params.go:ParseSetting                        nbexport TestParseSetting
//	nb-diag-headless         the failing cell's capture runs with a browser expected    labkit/nbexport/nbexport.go:failingCellOutputs                nbexport TestExportFailingCell
//	nb-call-type             -p cannot set F = float64(3)                              labkit/nbexport/params.go:literalType                         nbexport TestParameterValues
//	tornado-order            tornado puts the largest span at the bottom               labkit/resultcharts.go:Tornado                                labkit TestTornadoLargestSpanOnTop
//	stamp-variant-plural     stamp says '1 variant' for 2                              labkit/internal/plural/plural.go:Count                        nbexport TestStampRunTexts
//	stamp-traced-as-cached   traced runs counted as from the store                     labkit/nbexport/stamp.go:ranText                              nbexport TestStampRunTexts
//	stamp-quote-empty        an empty shell word left unquoted                         labkit/nbexport/stamp.go:shellQuote                           nbexport TestStampRunTexts
//	stamp-sweep-points       sweep points summed, not multiplied                       labkit/nbexport/stamp.go:runsText                             nbexport TestStampRunTexts
//	cli-cancel-exit          an interrupted run exits 1, not 130                       labkit/cmd/lab/main.go:interruptedStatus                      lab TestInterruptedExitStatus
//	cli-signal-exit          a run SIGTERM stops exits 130, not 143                    labkit/cmd/lab/main.go:interruptedStatus                      lab TestInterruptedExitStatus
//	sim-port-late-first      a request goes after a pushed-back poll due later         sim/memory.go:Memory.grant                                    sim TestPortServesAPushedBackPollInItsTurn
//	sim-poll-waits-twice     the spin's last poll waits again behind its gap           sim/memory.go:Memory.grant                                    sim TestSpinMatchesExplicitLoopUnderPortTraffic
//	sim-livelock-timer       a poll a pending timer will end is called a livelock      sim/engine.go:Engine.stalled                                  sim TestPollingThatEndsIsNoLivelock
//	sim-livelock-compute     work that reads nothing counts as polling                 sim/engine.go:Engine.stalled                                  sim TestPollingThatEndsIsNoLivelock
//	sim-livelock-alone       a loop polling alone on its core is never watched         sim/engine.go:Engine.aloneCheck                               sim TestLivelockOfHandWrittenLoops
//	store-no-checksum        a result file is read without its checksum checked        labkit/store.go:decode                                        labkit TestStoreRejectsBadFiles
//	store-trailing-quiet     trailing bytes are reported as a bare checksum mismatch   labkit/store.go:decode                                        labkit TestStoreRejectsBadFiles
//	ledger-one-missing       a claim missing one of its means is judged on NaN         labkit/ledger/ledger.go:JudgeResults                          ledger TestOneFailedVariantIsNeverJudged
//	ledger-pct-base          relative change taken against the new value, not the old  labkit/ledger/judge.go:pct                                     ledger TestVerdictsFollowTheNumbers
//	json-minus-inf           -Inf written as a JSON number (an encoding error)         labkit/export.go:Float.MarshalJSON                            labkit TestFloatNullsWhatJSONCannotCarry
//	sim-deadlock-outnumbered a thousand frequent background events stand for a rare tick   sim/engine.go:Engine.Run                                      sim TestRareTickIsNotOutnumbered
//	ledger-noise-ignored     a ratio's interval holding the threshold decides anyway   labkit/ledger/judge.go:spread.straddles                       ledger TestNoisyVerdictsWaitForTheSeeds
//	ledger-one-seed          one seed of a varying metric decides a verdict            labkit/ledger/judge.go:spread.straddles                       ledger TestNoisyVerdictsWaitForTheSeeds
//	ledger-unpaired          two points of one sweep read as independent samples       labkit/ledger/judge.go:runs.ratio                             ledger TestNoisyVerdictsWaitForTheSeeds
//	ledger-psram-start       a PSRAM seed that started in lock-step is not seen        labkit/ledger/esp32.go:everyHandOffSwitches                   ledger TestPSRAMStartNamedWhenEveryHandOffSwitches
//	ledger-rule-means        the 10 µs rule judged from means, seeds on both sides     labkit/ledger/esp32.go:esp-rule                               ledger TestNoisyVerdictsWaitForTheSeeds
//	ledger-queued-means      the queued-lock claim judged from means                   labkit/ledger/arm.go:arm-queued                               ledger TestNoisyVerdictsWaitForTheSeeds

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// mutant is one edit of one file: old, which occurs exactly once in file,
// replaced by new. test (a top-level test of package pkg) must fail on it.
type mutant struct {
	name     string
	file     string // from the repository root
	old, new string
	pkg      string // ./sim, ./platforms/esp32, ...
	test     string
}

var mutants = []mutant{
	{name: "esp32-cpu-swap", file: "platforms/esp32/experiments.go",
		old: `"cpu_core0_pct": r.CPUPct[0], "cpu_core1_pct": r.CPUPct[1],`,
		new: `"cpu_core0_pct": r.CPUPct[1], "cpu_core1_pct": r.CPUPct[0],`,
		pkg: "./platforms/esp32", test: "TestCSRunResultMapsEveryField"},
	{name: "rk3399-p99-max", file: "platforms/rk3399/experiments.go",
		old: `p99(&r.Waits) / float64(sim.Millisecond),`,
		new: `r.Waits.Max().Millis(),`,
		pkg: "./platforms/rk3399", test: "TestMetricsFromACraftedRun"},
	{name: "cache-code-version", file: "labkit/cache.go",
		old: `&& code.Key() != "" && r.Code.Key() == code.Key()`,
		new: ``,
		pkg: "./labkit", test: "TestCacheKeysOnCodeAndShard"},
	{name: "hash-seed-repeats", file: "platforms/experiment.go",
		old: `Repeats: e.Repeats, Seed: e.Seed}`,
		new: `}`,
		pkg: "./platforms", test: "TestHashAndDiffCoverWhatDeterminesTheRuns"},
	{name: "ticket-no-sev", file: "platforms/linux/locks.go",
		old: "\tl.sevRelease(p)\n}\n\n// sevRelease",
		new: "\tl.k.release(p, &l.w)\n}\n\n// sevRelease",
		pkg: "./platforms/linux", test: "TestWaiterWakes"},
	{name: "qspin-always-queue", file: "platforms/linux/locks.go",
		old: "// Any contention beyond the owner: queue.\n\tif val&^qLockedMask != 0 {",
		new: "// Any contention beyond the owner: queue.\n\tif true {",
		pkg: "./platforms/linux", test: "TestQSpinlockPendingThenMCSQueue"},
	{name: "tiered-never-wakes", file: "platforms/linux/wait.go",
		old: "if s.addr == a {\n\t\t\tk.wakeUp(p, s.cpu)",
		new: "if false {\n\t\t\tk.wakeUp(p, s.cpu)",
		pkg: "./platforms/linux", test: "TestWaiterWakes"},
	{name: "crosscore-latency-0", file: "platforms/esp32/soc.go",
		old: `s.E.After(s.Cores[target].Cycles(s.Cfg.CrosscoreLatency), ev)`,
		new: `s.E.After(0, ev)`,
		pkg: "./platforms/esp32", test: "TestCrosscoreLatencyDelaysTheWake"},
	{name: "disinherit-held", file: "platforms/esp32/queue.go",
		old: `holder.Priority != holder.BasePriority && holder.MutexesHeld == 0`,
		new: `holder.Priority != holder.BasePriority`,
		pkg: "./platforms/esp32", test: "TestDisinheritWaitsForTheLastMutex"},
	{name: "disinherit-timeout", file: "platforms/esp32/queue.go",
		old: `len(w) > 0 && w[0].Priority > prio {`,
		new: `false && len(w) > 0 && w[0].Priority > prio {`,
		pkg: "./platforms/esp32", test: "TestDisinheritAfterTimeoutKeepsRemainingWaiters"},

	// Our own, across sim, platforms and labkit.
	{name: "sim-prefetch-shared", file: "sim/isa.go",
		old: "_, _, _, _, done := m.access(c, a, true, false)\n\treturn done",
		new: "_, _, _, _, done := m.access(c, a, false, false)\n\treturn done",
		pkg: "./sim", test: "TestPrefetchStore"},
	{name: "sim-acquire-no-prefetch", file: "sim/condwait.go",
		old: "first = acqPrefetch\n",
		new: "",
		pkg: "./sim", test: "TestAcquireMatchesExplicitLoop"},
	{name: "linux-llsc-no-prefetch", file: "platforms/linux/wait.go",
		old: "p.PrefetchStore(a) // a hint, not an access: not counted\n",
		new: "",
		pkg: "./platforms/linux", test: "TestUncontendedAcquireIsOneTransfer"},
	{name: "sim-monitor-kept", file: "sim/memory.go",
		old: "o.monLine, o.monReg = -1, nil\n",
		new: "",
		pkg: "./sim", test: "TestSwap"},
	{name: "sim-monitor-loss-off", file: "sim/memory.go",
		old: "if m.coh.MonitorLoss {",
		new: "if false {",
		pkg: "./sim", test: "TestMonitorLoss"},
	{name: "sim-prefetch-upgrades", file: "sim/isa.go",
		old: "r.lines[li].sharers&(1<<c.ID) != 0 && !c.Cfg.PrefetchUpgrade {",
		new: "false {",
		pkg: "./sim", test: "TestPrefetchStore"},
	{name: "sim-same-write-changes", file: "sim/memory.go",
		old: "if changed && c.cur != nil {",
		new: "if c.cur != nil {",
		pkg: "./sim", test: "TestSameValueWritesChangeNothing"},
	{name: "sim-stream-edge", file: "sim/isa.go",
		old: `for t <= now {`,
		new: `for t < now {`,
		pkg: "./sim", test: "TestEventStreamNextTick"},
	{name: "sim-port-parallel", file: "sim/memory.go",
		old: `s := max(t, m.busy)`,
		new: `s := t`,
		pkg: "./sim", test: "TestUncachedPortArbitration"},
	{name: "sim-ffwd-extra-period", file: "sim/ffwd.go",
		old: "\treturn k\n}",
		new: "\treturn k + 1\n}",
		pkg: "./sim", test: "TestFastForwardExact"},
	{name: "sim-hist-bucket", file: "sim/stats.go",
		old: `return shift<<histSubBits + int(u>>shift)`,
		new: `return shift<<histSubBits + int(u>>shift) + 1`,
		pkg: "./sim", test: "TestHistogramBuckets"},
	{name: "sim-percentile-n", file: "sim/stats.go",
		old: `h := float64(n-1) * (p / 100)`,
		new: `h := float64(n) * (p / 100)`,
		pkg: "./sim", test: "TestPercentileMatchesNumPy"},
	{name: "sim-ties-lifo", file: "sim/engine.go",
		old: `a.seq < b.seq`,
		new: `a.seq > b.seq`,
		pkg: "./sim", test: "TestEventTiesFireInScheduleOrder"},
	{name: "sim-cancel-rare", file: "sim/engine.go",
		old: `const checkEvery = 4096`,
		new: `const checkEvery = 1 << 20`,
		pkg: "./sim", test: "TestCancelPrompt"},
	{name: "param-integer", file: "platforms/param.go",
		old: `if p.Integer && v != math.Trunc(v) {`,
		new: `if false && p.Integer && v != math.Trunc(v) {`,
		pkg: "./platforms", test: "TestSetFrom"},
	{name: "settings-garbage", file: "platforms/experiment.go",
		old: `v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)`,
		new: "var v float64\n\t\t_, err := fmt.Sscan(val, &v)\n\t\t_ = strconv.IntSize",
		pkg: "./platforms", test: "TestWithSettingsAndVariants"},
	{name: "portmux-any-owner", file: "platforms/esp32/port.go",
		old: `if p.Load(m.Addr) == coreIDRegval[c] {`,
		new: `if p.Load(m.Addr) != spinlockFree {`,
		pkg: "./platforms/esp32", test: "TestMutualExclusionSeeds"},
	{name: "esp32-timeout-late", file: "platforms/esp32/tasks.go",
		old: `t.wakeTick = k.tickCount + ticks`,
		new: `t.wakeTick = k.tickCount + ticks + 1`,
		pkg: "./platforms/esp32", test: "TestTakeTimeoutExactTicks"},
	{name: "esp32-api-swap", file: "platforms/esp32/experiments.go",
		old: `"spinlock_cycles": r.LockSections * r.PairCycles, "s32c1i_cycles": r.LockSections * r.S32C1ICycles,`,
		new: `"spinlock_cycles": r.LockSections * r.S32C1ICycles, "s32c1i_cycles": r.LockSections * r.PairCycles,`,
		pkg: "./platforms/esp32", test: "TestAPIPathsMetricsFromTheRun"},
	{name: "ncore-last-cluster", file: "platforms/generic/soc.go",
		old: `c.Cores = min(perCluster, left)`,
		new: `c.Cores = perCluster`,
		pkg: "./platforms/generic", test: "TestNCoreTopology"},
	{name: "nohz-tick-runs", file: "platforms/linux/kernel.go",
		old: "if k.Cfg.NoHZIdle {\n\t\tcpu.tick.Stop()",
		new: "if false {\n\t\tcpu.tick.Stop()",
		pkg: "./platforms/linux", test: "TestTickAndIdle"},
	{name: "split-percluster", file: "platforms/rk3399/experiments.go",
		old: `w.Split, w.PerCluster = true, true`,
		new: `w.Split = true`,
		pkg: "./platforms/rk3399", test: "TestSplitVariantsContendAsTheirLocksAreShared"},
	{name: "scaling-wait-ignored", file: "platforms/rk3399/experiments.go",
		old: `Build(v, soc, f, linux.Mode(int(v["wait"])))`,
		new: `Build(v, soc, f, linux.WFE)`,
		pkg: "./platforms/rk3399", test: "TestLockScalingWaitPolicies"},
	{name: "student-t-df-n", file: "labkit/stats.go",
		old: `tQuantile(0.95, float64(len(xs)-1))`,
		new: `tQuantile(0.95, float64(len(xs)))`,
		pkg: "./labkit", test: "TestSummarizeKnownValues"},
	{name: "fieller-sign", file: "labkit/stats.go",
		old: `r.Lo, r.Hi = (-qb-sq)/(2*qa), (-qb+sq)/(2*qa)`,
		new: `r.Lo, r.Hi = (qb-sq)/(2*qa), (qb+sq)/(2*qa)`,
		pkg: "./labkit", test: "TestRatioCI"},
	{name: "journal-crc", file: "labkit/journal.go",
		old: `if crc32.Checksum(p, crcTable) != crc {`,
		new: `if crc32.Checksum(p, crcTable) != crc && false {`,
		pkg: "./labkit", test: "TestJournalTornOrForeignRecords"},
	{name: "merge-duplicate", file: "labkit/store.go",
		old: `case seen[p.Shard.Index] > 0:`,
		new: `case false && seen[p.Shard.Index] > 0:`,
		pkg: "./labkit", test: "TestShardsPartitionJobs"},
	{name: "cache-shard", file: "labkit/cache.go",
		old: `r.Hash == hash && r.Shard == shard &&`,
		new: `r.Hash == hash &&`,
		pkg: "./labkit", test: "TestCacheKeysOnCodeAndShard"},
	{name: "seed-ignores-repeat", file: "labkit/runner.go",
		old: `binary.LittleEndian.PutUint64(b[:], uint64(repeat))`,
		new: `binary.LittleEndian.PutUint64(b[:], 0)`,
		pkg: "./labkit", test: "TestRunSeedsDistinct"},
	{name: "seed-follows-position", file: "labkit/runner.go",
		old: `Seed: RunSeed(e.Seed, e.Variants[v].Name, rep), Repeat: rep,`,
		new: `Seed: RunSeed(e.Seed+uint64(p), e.Variants[v].Name, rep), Repeat: rep,`,
		pkg: "./labkit", test: "TestPointResultsIgnoreTheSweep"},
	{name: "claims-one-seed", file: "labkit/reference.go",
		old: `case min(len(xa), len(xb)) < 2 && art != 0:`,
		new: `case false:`,
		pkg: "./labkit", test: "TestClaimsFromOneSeed"},
	{name: "csv-repeat-column", file: "labkit/export.go",
		old: `row = append(row, strconv.Itoa(run.Repeat), strconv.FormatUint(run.Seed, 10))`,
		new: `row = append(row, strconv.Itoa(run.Point), strconv.FormatUint(run.Seed, 10))`,
		pkg: "./labkit", test: "ExampleResult_WriteCSV"},
	{name: "doc-n-counts-failed", file: "labkit/export.go",
		old: `c.N = len(cell) - c.Failed`,
		new: `c.N = len(cell)`,
		pkg: "./labkit", test: "TestRunDocAndCSVAgree"},
	{name: "decode-repeated-run", file: "labkit/decodecheck.go",
		old: `if j <= prev {`,
		new: `if j < prev {`,
		pkg: "./labkit", test: "TestDecodeValidatesTheResult"},
	{name: "ledger-irq-inverted", file: "labkit/ledger/esp32.go",
		old: `case no < mu:`,
		new: `case no > mu:`,
		pkg: "./labkit/ledger", test: "TestVerdictsFollowTheNumbers"},
	{name: "ledger-within-one-sided", file: "labkit/ledger/judge.go",
		old: `return a <= b*f && b <= a*f`,
		new: `return a <= b*f`,
		pkg: "./labkit/ledger", test: "TestVerdictsFollowTheNumbers"},
	{name: "cache-hides-failures", file: "labkit/cache.go",
		old: `return res, res.RunsFailed()`,
		new: `return res, nil`,
		pkg: "./labkit", test: "TestFailedRunsAreJournaledCachedAndMerged"},
	{name: "journal-skips-failed", file: "labkit/runner.go",
		old: `	if b.journal != nil {
		b.journal.add(*r)`,
		new: `	if b.journal != nil && !r.Failed() {
		b.journal.add(*r)`,
		pkg: "./labkit", test: "TestFailedRunsAreJournaledCachedAndMerged"},
	{name: "sim-wfe-power", file: "sim/core.go",
		old: "case StateWFE:\n\t\treturn c.Cfg.WFEMW",
		new: "case StateWFE:\n\t\treturn c.Cfg.WFIMW",
		pkg: "./sim", test: "TestEnergyFromConfiguredPowers"},
	{name: "sim-residency-closed", file: "sim/core.go",
		old: "if s == c.state {\n\t\tr += c.e.now - c.since",
		new: "if false {\n\t\tr += c.e.now - c.since",
		pkg: "./sim", test: "TestResidencyMidRun"},
	{name: "sim-mask-lowers", file: "sim/proc.go",
		old: `c.level = max(c.level, level)`,
		new: `c.level = level`,
		pkg: "./sim", test: "TestMaskNeverLowersLevel"},
	{name: "sim-wfi-uncounted", file: "sim/proc.go",
		old: "p.waitFor(waitWFI)\n\t\tc.Wakeups[WakeInterrupt]++\n\t\tc.setState(c.runState())",
		new: "p.waitFor(waitWFI)\n\t\tc.setState(c.runState())",
		pkg: "./sim", test: "TestWFICountsInterruptWakeup"},
	{name: "sim-quiet-ticks", file: "sim/engine.go",
		old: `quiet > 1000 &&`,
		new: `quiet > 1000000 &&`,
		pkg: "./sim", test: "TestDeadlockWithOnlyTicksLeft"},
	{name: "sim-idle-exit-free", file: "sim/proc.go",
		old: `p.waitUntil(p.e.now+st.Exit, waitNone)`,
		new: `p.waitUntil(p.e.now, waitNone)`,
		pkg: "./sim", test: "TestIdleExitLatency"},
	{name: "esp32-disinherit-two", file: "platforms/esp32/queue.go",
		old: `h.Priority != prio && h.MutexesHeld == 1 {`,
		new: `h.Priority != prio && h.MutexesHeld >= 1 {`,
		pkg: "./platforms/esp32", test: "TestDisinheritAfterTimeoutKeepsPriorityWithOtherMutexHeld"},
	{name: "esp32-equal-preempts", file: "platforms/esp32/tasks.go",
		old: "c := coreID(p)\n\tif canRunOn(t, c) && t.Priority > k.cpu[c].cur.Priority {",
		new: "c := coreID(p)\n\tif canRunOn(t, c) && t.Priority >= k.cpu[c].cur.Priority {",
		pkg: "./platforms/esp32", test: "TestEqualPriorityWakeDoesNotPreempt"},
	{name: "esp32-release-early", file: "platforms/esp32/port.go",
		old: "k.flush(p)\n\t\tm.owner = -1",
		new: "m.owner = -1",
		pkg: "./platforms/esp32", test: "TestSpinOnHeldLockCountsAsContended"},
	{name: "esp32-reason-kept", file: "platforms/esp32/crosscore.go",
		old: `k.guardedStore(p, a, 0)`,
		new: `k.guardedStore(p, a, r)`,
		pkg: "./platforms/esp32", test: "TestCrosscoreISRClearsReason"},
	{name: "esp32-tick-core1", file: "platforms/esp32/tasks.go",
		old: "if c == 0 {\n\t\tk.tickCount++",
		new: "if c == 1 {\n\t\tk.tickCount++",
		pkg: "./platforms/esp32", test: "TestTickCountAdvancesWhileCore1Masked"},
	{name: "linux-polls-plus-one", file: "platforms/linux/wait.go",
		old: "sp.Polls = w.SpinLimit\n",
		new: "sp.Polls = w.SpinLimit + 1\n",
		pkg: "./platforms/linux", test: "TestPollsBeforeWFE"},
	{name: "linux-tier-extra-wfe", file: "platforms/linux/wait.go",
		old: `case iter < w.SpinLimit+w.WFELimit,`,
		new: `case iter <= w.SpinLimit+w.WFELimit,`,
		pkg: "./platforms/linux", test: "TestTieredWFEWakeupsBeforeSchedule"},
	{name: "linux-cmpwait-inverted", file: "platforms/linux/wait.go",
		old: `if k.ldxr(p, a) == v {`,
		new: `if k.ldxr(p, a) != v {`,
		pkg: "./platforms/linux", test: "TestTieredWFEWakeupsBeforeSchedule"},
	{name: "linux-no-recheck", file: "platforms/linux/wait.go",
		old: `if cond(k.load(p, a)) {`,
		new: `if false && cond(k.load(p, a)) {`,
		pkg: "./platforms/linux", test: "TestTieredRecheckAfterQueueing"},
	{name: "linux-redundant-sev-off", file: "platforms/linux/wait.go",
		old: `if w.RedundantSEV {`,
		new: `if false && w.RedundantSEV {`,
		pkg: "./platforms/linux", test: "TestRedundantSEVWakesEveryCore"},
	{name: "linux-idle-shallowest", file: "platforms/linux/kernel.go",
		old: "state = i\n",
		new: "if state < 0 {\n\t\t\t\t\tstate = i\n\t\t\t\t}\n",
		pkg: "./platforms/linux", test: "TestCpuidlePicksDeepestFittingState"},
	{name: "sim-ffwd-until", file: "sim/ffwd.go",
		old: "if e.Until != 0 {\n\t\text = min(ext, e.Until)",
		new: "if false {\n\t\text = min(ext, e.Until)",
		pkg: "./sim", test: "TestFastForwardHonoursLimits"},
	{name: "sim-ffwd-maxevents", file: "sim/ffwd.go",
		old: `e.MaxEvents != 0 && d > 0 {`,
		new: `false && e.MaxEvents != 0 && d > 0 {`,
		pkg: "./sim", test: "TestFastForwardHonoursLimits"},
	{name: "sim-ffwd-unseen-proc", file: "sim/ffwd.go",
		old: `if c.vals[pm.resumes] != b.vals[pm.resumes] && (`,
		new: `if false && c.vals[pm.resumes] != b.vals[pm.resumes] && (`,
		pkg: "./sim", test: "TestFastForwardRefusesWhatItCannotSee"},
	{name: "sim-ffwd-hist-values", file: "sim/ffwd.go",
		old: `if r.kind == refHist && f.d[i] > 0 &&`,
		new: `if false && r.kind == refHist && f.d[i] > 0 &&`,
		pkg: "./sim", test: "TestFastForwardRefusesWhatItCannotSee"},
	{name: "sim-ffwd-recall-any", file: "sim/ffwd.go",
		old: `if d != ks.d[i] {`,
		new: `if false && d != ks.d[i] {`,
		pkg: "./sim", test: "TestFastForwardRecall"},
	{name: "sim-ffwd-epoch-moves", file: "sim/ffwd.go",
		old: `if r.kind == refEpoch && f.d[i] != 0 {`,
		new: `if false && r.kind == refEpoch && f.d[i] != 0 {`,
		pkg: "./sim", test: "TestFastForwardRecall"},
	{name: "sim-spin-last-stall", file: "sim/spin.go",
		old: "c.Stall += done - issued\n",
		new: "",
		pkg: "./sim", test: "TestSpinStallIsFirstAndLastRead"},
	{name: "sim-oneshot-period", file: "sim/irq.go",
		old: "\tt.period = 0\n\tt.at = max(at, t.c.e.now)",
		new: "\tt.at = max(at, t.c.e.now)",
		pkg: "./sim", test: "TestTimersDevicesAndIPIsFireOnTime"},
	{name: "sim-trace-touch", file: "sim/trace.go",
		old: `s.End <= t.From ||`,
		new: `s.End < t.From ||`,
		pkg: "./sim", test: "TestTraceAddClipsToTheHalfOpenWindow"},
	{name: "sim-trace-max", file: "sim/trace.go",
		old: `len(t.Spans) >= t.Max`,
		new: `len(t.Spans) > t.Max`,
		pkg: "./sim", test: "TestTraceAddClipsToTheHalfOpenWindow"},
	{name: "validate-repeats", file: "platforms/experiment.go",
		old: `if e.Repeats < 1 {`,
		new: `if e.Repeats < 0 {`,
		pkg: "./platforms", test: "TestValidateRejectsEachInconsistency"},
	{name: "validate-sweep-twice", file: "platforms/experiment.go",
		old: `if slices.Contains(a.Values[:i], v) {`,
		new: `if false && slices.Contains(a.Values[:i], v) {`,
		pkg: "./platforms", test: "TestValidateRejectsEachInconsistency"},
	{name: "variants-twice", file: "platforms/experiment.go",
		old: `if slices.Contains(names[:i], n) {`,
		new: `if false && slices.Contains(names[:i], n) {`,
		pkg: "./platforms", test: "TestWithVariantsOrderAndRepeat"},
	{name: "esp32-worst-tie-last", file: "platforms/esp32/experiments.go",
		old: `if worst < 0 || l > r.IRQLatencyUS[worst] {`,
		new: `if worst < 0 || l >= r.IRQLatencyUS[worst] {`,
		pkg: "./platforms/esp32", test: "TestWorstIRQSplitIsTheFirstOfTies"},
	{name: "esp32-notify-no-wrap", file: "platforms/esp32/notify.go",
		old: `k.guardedStore(p, va, uint64(uint32(v)+1))`,
		new: `k.guardedStore(p, va, v+1)`,
		pkg: "./platforms/esp32", test: "TestNotifyIncrementWrapsToAnEmptyCount"},
	{name: "esp32-give-overfill", file: "platforms/esp32/queue.go",
		old: `if n >= s.max || (s.isMutex() && s.holder != t) {`,
		new: `if n > s.max || (s.isMutex() && s.holder != t) {`,
		pkg: "./platforms/esp32", test: "TestGiveToAFullSemaphoreFails"},
	{name: "esp32-isr-give-overfill", file: "platforms/esp32/queue.go",
		old: "\tif n >= s.max {\n\t\tk.exitCritical(p, s.Lock)\n\t\treturn false, false",
		new: "\tif n > s.max {\n\t\tk.exitCritical(p, s.Lock)\n\t\treturn false, false",
		pkg: "./platforms/esp32", test: "TestGiveToAFullSemaphoreFails"},
	{name: "esp32-counting-full", file: "platforms/esp32/queue.go",
		old: `if maxCount == 0 || initial > maxCount {`,
		new: `if maxCount == 0 || initial >= maxCount {`,
		pkg: "./platforms/esp32", test: "TestCountingSemaphoreCreatedFull"},
	{name: "esp32-waitlist-resorted", file: "platforms/esp32/queue.go",
		old: "\t\tt.Priority = prio\n\t\treturn\n",
		new: "\t\tif l := t.event; l != nil {\n\t\t\tl.remove(t)\n\t\t\tt.Priority = prio\n\t\t\tl.insert(t)\n\t\t}\n\t\tt.Priority = prio\n\t\treturn\n",
		pkg: "./platforms/esp32", test: "TestInheritanceKeepsTheWaitListOrder"},
	{name: "esp32-pick-stays", file: "platforms/esp32/tasks.go",
		old: "\t\t\tcopy(l[i:], l[i+1:])\n\t\t\tl[len(l)-1] = t\n\t\t\treturn t",
		new: "\t\t\t_ = i\n\t\t\treturn t",
		pkg: "./platforms/esp32", test: "TestBestEffortRoundRobin"},
	{name: "esp32-pick-no-wait", file: "platforms/esp32/tasks.go",
		old: "\t\t\t\tif wait {\n\t\t\t\t\treturn nil",
		new: "\t\t\t\tif wait && false {\n\t\t\t\t\treturn nil",
		pkg: "./platforms/esp32", test: "TestTimeSliceUnpinnedFair"},
	{name: "esp32-insert-at-tail", file: "platforms/esp32/tasks.go",
		old: "if x := k.readyIndex[t.Priority]; x != nil {",
		new: "if x := k.readyIndex[t.Priority]; x != nil && false {",
		pkg: "./platforms/esp32", test: "TestReadiedAheadOfAWalkedList"},
	{name: "esp32-tick-yields-other", file: "platforms/esp32/tasks.go",
		old: "\t\t\t\tk.unblockOnTick(p, t)\n",
		new: "\t\t\t\tk.unblock(p, t)\n",
		pkg: "./platforms/esp32", test: "TestTickWakeWaitsForOwnCoreTick"},
	{name: "esp32-no-yield-pending", file: "platforms/esp32/tasks.go",
		old: "\t\tk.cpu[c].yieldPending = true\n",
		new: "\n",
		pkg: "./platforms/esp32", test: "TestYieldPendingTakenAtTick"},
	{name: "esp32-delay0-noop", file: "platforms/esp32/notify.go",
		old: "\tif ticks > 0 {\n\t\tk.enterCritical(p, k.KernelLock)",
		new: "\tif ticks == 0 {\n\t\treturn\n\t}\n\tif ticks > 0 {\n\t\tk.enterCritical(p, k.KernelLock)",
		pkg: "./platforms/esp32", test: "TestDelayZeroYields"},
	{name: "rk3399-handoff-max", file: "platforms/rk3399/experiments.go",
		old: `m["handoff_ns"] = r.Handoffs.Mean().Nanos()`,
		new: `m["handoff_ns"] = r.Handoffs.Max().Nanos()`,
		pkg: "./platforms/rk3399", test: "TestLockScalingHandoffIsTheMean"},
	{name: "rk3399-energy-one-core", file: "platforms/rk3399/workload.go",
		old: `res.EnergyMJ += c.EnergyMJ()`,
		new: `res.EnergyMJ = c.EnergyMJ()`,
		pkg: "./platforms/rk3399", test: "TestEnergyCoversEveryUsedCore"},
	{name: "cal-relres-zero", file: "labkit/calibrate.go",
		old: "if measured == 0 {\n\t\treturn model",
		new: "if false {\n\t\treturn model",
		pkg: "./labkit", test: "TestRelResidual"},
	{name: "cal-relres-sign", file: "labkit/calibrate.go",
		old: `return (model - measured) / math.Abs(measured)`,
		new: `return (model - measured) / measured`,
		pkg: "./labkit", test: "TestRelResidual"},
	{name: "cal-dof-ident", file: "labkit/calibrate.go",
		old: `f.DOF = n - len(keep)`,
		new: `f.DOF = n - len(ident)`,
		pkg: "./labkit", test: "TestCalibrateDegreesOfFreedom"},
	{name: "cal-t-df", file: "labkit/calibrate.go",
		old: `t := tQuantile(0.95, float64(f.DOF))`,
		new: `t := tQuantile(0.95, float64(f.DOF+1))`,
		pkg: "./labkit", test: "TestCalibrateIntervalsFromTheLinearizedModel"},
	{name: "cal-int-round", file: "labkit/calibrate.go",
		old: `fp.Low, fp.High = math.Floor(fp.Low), math.Ceil(fp.High)`,
		new: `fp.Low, fp.High = math.Round(fp.Low), math.Round(fp.High)`,
		pkg: "./labkit", test: "TestCalibrateIntegerIntervalWidened"},
	{name: "cal-choice-worst", file: "labkit/calibrate.go",
		old: `if fits[i].f.SSR < fits[best].f.SSR {`,
		new: `if fits[i].f.SSR > fits[best].f.SSR {`,
		pkg: "./labkit", test: "TestCalibrateChoice"},
	{name: "cal-choice-untested", file: "labkit/calibrate.go",
		old: `a.Rejected = a.SSR-f.SSR > limit`,
		new: `a.Rejected = a.SSR-f.SSR > limit+math.Inf(1)`,
		pkg: "./labkit", test: "TestCalibrateChoice"},
	{name: "cal-edge-zero", file: "labkit/calibrate.go",
		old: `switch edge := 0.01 * scale(pp); {`,
		new: `switch edge := 0.0; {`,
		pkg: "./labkit", test: "TestCalibrateOutside"},
	{name: "cal-plausible-high-only", file: "labkit/calibrate.go",
		old: `case th[j] < pp.Low || th[j] > pp.High:`,
		new: `case th[j] > pp.High:`,
		pkg: "./labkit", test: "TestCalibrateOutside"},
	{name: "cal-col-threshold", file: "labkit/calibrate.go",
		old: `mat.Norm(mat.NewVecDense(n, col), 2)*scale(pp) < 1e-9`,
		new: `mat.Norm(mat.NewVecDense(n, col), 2)*scale(pp) < 0`,
		pkg: "./labkit", test: "TestCalibrateDegreesOfFreedom"},
	{name: "cal-int-step", file: "labkit/calibrate.go",
		old: `h = math.Max(math.Round(h), 1)`,
		new: `h = math.Max(math.Round(h), 0)`,
		pkg: "./labkit", test: "TestCalibrateNarrowIntegerParameter"},
	{name: "cal-resid-sort", file: "labkit/calibrate.go",
		old: `return math.Abs(rs[a].Rel) > math.Abs(rs[b].Rel)`,
		new: `return math.Abs(rs[a].Rel) < math.Abs(rs[b].Rel)`,
		pkg: "./labkit", test: "TestResidualTableWorstFirst"},
	{name: "sens-tornado-base", file: "labkit/sensitivity.go",
		old: `d := 100 * (c.Result.Summary(variant, 0, metric).Mean - base) / base`,
		new: `d := 100 * (c.Result.Summary(variant, 0, metric).Mean - base) / c.Result.Summary(variant, 0, metric).Mean`,
		pkg: "./labkit", test: "TestSensitivityWhichParametersMoveTheConclusion"},
	{name: "sens-tornado-sides", file: "labkit/sensitivity.go",
		old: "if c.Side == \"low\" {\n\t\t\tbars[i].Low = d",
		new: "if c.Side != \"low\" {\n\t\t\tbars[i].Low = d",
		pkg: "./labkit", test: "TestSensitivityWhichParametersMoveTheConclusion"},
	{name: "sens-baseline-failed", file: "labkit/sensitivity.go",
		old: `anyFailed := len(s.Baseline.Failures()) > 0`,
		new: `anyFailed := false`,
		pkg: "./labkit", test: "TestSensitivityTableBaselineFailures"},
	{name: "sens-holds-nohold-text", file: "labkit/sensitivity.go",
		old: `if len(a) == 0 || len(b) == 0 {`,
		new: `if len(b) == 0 {`,
		pkg: "./labkit", test: "TestSensitivityTableBaselineFailures"},
	{name: "sens-judge-noise", file: "labkit/sensitivity.go",
		old: `case min(len(a), len(b)) < 2, ma == mb, ratio.Lo <= 1 && 1 <= ratio.Hi:`,
		new: `case min(len(a), len(b)) < 2, ma == mb, ratio.Lo > ratio.Hi:`,
		pkg: "./labkit", test: "TestConclusionJudge"},
	{name: "num-sci-edge", file: "labkit/format.go",
		old: `if a < 1e-3 || a >= 1e15 {`,
		new: `if a <= 1e-3 || a >= 1e15 {`,
		pkg: "./labkit", test: "TestFormatEdges"},
	{name: "num-neg-group", file: "labkit/format.go",
		old: "if strings.HasPrefix(s, \"-\") {\n\t\tsign, s = \"-\", s[1:]",
		new: "if false {\n\t\tsign, s = \"-\", s[1:]",
		pkg: "./labkit", test: "TestFormatEdges"},
	{name: "meanci-half-digit", file: "labkit/format.go",
		old: `case s.Half < shownDigit(a)/2:`,
		new: `case s.Half < shownDigit(a):`,
		pkg: "./labkit", test: "TestFormatEdges"},
	{name: "qty-rollover-top", file: "labkit/format.go",
		old: `strings.HasPrefix(strings.TrimPrefix(s, "-"), "1,000") && p < 3`,
		new: `strings.HasPrefix(strings.TrimPrefix(s, "-"), "1,000") && p <= 3`,
		pkg: "./labkit", test: "TestFormatEdges"},
	{name: "qty-no-clamp-top", file: "labkit/format.go",
		old: `p = max(-3, min(3, p))`,
		new: `p = max(-3, p)`,
		pkg: "./labkit", test: "TestFormatEdges"},
	{name: "qty-neg-rollover", file: "labkit/format.go",
		old: `strings.HasPrefix(strings.TrimPrefix(s, "-"), "1,000")`,
		new: `strings.HasPrefix(s, "1,000")`,
		pkg: "./labkit", test: "TestFormatEdges"},
	{name: "rel-factor-edge", file: "labkit/format.go",
		old: `case r >= 2:`,
		new: `case r > 2:`,
		pkg: "./labkit", test: "TestFormatEdges"},
	{name: "rel-factor-low-edge", file: "labkit/format.go",
		old: `case r <= 0.5:`,
		new: `case r < 0.5:`,
		pkg: "./labkit", test: "TestFormatEdges"},
	{name: "sum-title-repeats", file: "labkit/table.go",
		old: `if e.Repeats < 2 {`,
		new: `if e.Repeats < 1 {`,
		pkg: "./labkit", test: "TestSummaryTableCells"},
	{name: "sum-half-unscaled", file: "labkit/stats.go",
		old: `[]*float64{&s.Mean, &s.SD, &s.Half, &s.Lo,`,
		new: `[]*float64{&s.Mean, &s.SD, &s.Lo,`,
		pkg: "./labkit", test: "TestSummaryTableCells"},
	{name: "fail-point0", file: "labkit/table.go",
		old: `row = append(row, Num(points[run.Point][a.Param]))`,
		new: `row = append(row, Num(points[0][a.Param]))`,
		pkg: "./labkit", test: "TestFailuresTableNamesThePoint"},
	{name: "claims-unit-sim-only", file: "labkit/table.go",
		old: "vals = append(vals, s.Article)\n",
		new: "\n",
		pkg: "./labkit", test: "TestClaimsTableUnitFitsTheArticleToo"},
	{name: "log-span-ge", file: "labkit/charts.go",
		old: `return hi > lo && hi/lo > logSpan`,
		new: `return hi > lo && hi/lo >= logSpan`,
		pkg: "./labkit", test: "TestAxisTypes"},
	{name: "colors-others-front", file: "labkit/colors.go",
		old: `return palette[len(palette)-1-i%len(palette)]`,
		new: `return palette[i%len(palette)]`,
		pkg: "./labkit", test: "TestOtherSeriesTakeColoursFromThePaletteEnd"},
	{name: "shard-parse-zero", file: "labkit/runner.go",
		old: `sh.check() != nil || sh.Count == 0`,
		new: `sh.check() != nil`,
		pkg: "./labkit", test: "TestShardsPartitionJobs"},
	{name: "tol-width-abs", file: "labkit/validate.go",
		old: `return t.Abs + t.Rel*math.Abs(published)`,
		new: `return t.Abs + t.Rel*published`,
		pkg: "./labkit", test: "TestJudgeNegativePublished"},
	{name: "valtab-bound", file: "labkit/validate.go",
		old: "if v.Kind != Bound {\n\t\t\ttol",
		new: "if true {\n\t\t\ttol",
		pkg: "./labkit", test: "TestValidationTableColumns"},
	{name: "valtab-setfrom", file: "labkit/validate.go",
		old: `ind = "no (set from it: " + strings.Join(v.SetFrom, ", ") + ")"`,
		new: `ind = "no (set from it: " + strings.Join(v.SetFrom[:0], ", ") + ")"`,
		pkg: "./labkit", test: "TestValidationTableColumns"},
	{name: "nb-unary", file: "labkit/nbexport/params.go",
		old: `if x.Op == token.SUB || x.Op == token.ADD {`,
		new: `if x.Op == token.ADD {`,
		pkg: "./labkit/nbexport", test: "TestParameterValues"},
	{name: "nb-bool-raw", file: "labkit/nbexport/params.go",
		old: `return strconv.FormatBool(v), nil`,
		new: "_ = v\n\t\treturn raw, nil",
		pkg: "./labkit/nbexport", test: "TestParameterValues"},
	{name: "nb-empty-list", file: "labkit/nbexport/params.go",
		old: "if strings.TrimSpace(raw) != \"\" {\n\t\t\titems",
		new: "if true {\n\t\t\titems",
		pkg: "./labkit/nbexport", test: "TestParameterValues"},
	{name: "nb-setting-emptykey", file: "labkit/nbexport/params.go",
		old: `if key = strings.TrimSpace(key); !ok || key == "" {`,
		new: `if key = strings.TrimSpace(key); !ok {`,
		pkg: "./labkit/nbexport", test: "TestParseSetting"},
	{name: "nb-setting-trim", file: "labkit/nbexport/params.go",
		old: `if key = strings.TrimSpace(key); !ok || key == "" {`,
		new: `if !ok || key == "" {`,
		pkg: "./labkit/nbexport", test: "TestParseSetting"},
	{name: "nb-call-type", file: "labkit/nbexport/params.go",
		old: `if id, ok := x.Fun.(*ast.Ident); ok && len(x.Args) == 1 {`,
		new: `if id, ok := x.Fun.(*ast.Ident); ok && false && len(x.Args) == 1 {`,
		pkg: "./labkit/nbexport", test: "TestParameterValues"},
	{name: "tornado-order", file: "labkit/resultcharts.go",
		old: `return compareFloat(span(a), span(b))`,
		new: `return compareFloat(span(b), span(a))`,
		pkg: "./labkit", test: "TestTornadoLargestSpanOnTop"},
	{name: "stamp-variant-plural", file: "labkit/internal/plural/plural.go",
		old: `if n == 1 {
		return "1 " + thing`,
		new: `if n <= 2 {
		return "1 " + thing`,
		pkg: "./labkit/nbexport", test: "TestStampRunTexts"},
	{name: "stamp-traced-as-cached", file: "labkit/nbexport/stamp.go",
		old: "case r.Traced:\n\t\t\ts.traced += r.Runs",
		new: "case r.Traced:\n\t\t\ts.cached += r.Runs",
		pkg: "./labkit/nbexport", test: "TestStampRunTexts"},
	{name: "stamp-quote-empty", file: "labkit/nbexport/stamp.go",
		old: `if s != "" && strings.Trim(`,
		new: `if strings.Trim(`,
		pkg: "./labkit/nbexport", test: "TestStampRunTexts"},
	{name: "stamp-sweep-points", file: "labkit/nbexport/stamp.go",
		old: "points *= len(a.Values)\n\t}\n\ts := \"(\" + plural.Count(r.Runs, \"run\")",
		new: "points += len(a.Values)\n\t}\n\ts := \"(\" + plural.Count(r.Runs, \"run\")",
		pkg: "./labkit/nbexport", test: "TestStampRunTexts"},
	{name: "cli-cancel-exit", file: "labkit/cmd/lab/main.go",
		old: "return exitInterrupted\n",
		new: "return exitFail\n",
		pkg: "./labkit/cmd/lab", test: "TestInterruptedExitStatus"},
	{name: "cli-signal-exit", file: "labkit/cmd/lab/main.go",
		old: "return 128 + int(s.sig)\n",
		new: "return exitInterrupted\n",
		pkg: "./labkit/cmd/lab", test: "TestInterruptedExitStatus"},
	{name: "sim-port-late-first", file: "sim/memory.go",
		old: `if due > t {`,
		new: `if false && due > t {`,
		pkg: "./sim", test: "TestPortServesAPushedBackPollInItsTurn"},
	{name: "sim-poll-waits-twice", file: "sim/memory.go",
		old: `if c.wait == waitSpin && c.spinReserved == t {`,
		new: `if false && c.wait == waitSpin && c.spinReserved == t {`,
		pkg: "./sim", test: "TestSpinMatchesExplicitLoopUnderPortTraffic"},
	{name: "sim-livelock-timer", file: "sim/engine.go",
		old: "quiet < pollAfter || e.timerPending()",
		new: "quiet < pollAfter",
		pkg: "./sim", test: "TestPollingThatEndsIsNoLivelock"},
	{name: "sim-livelock-compute", file: "sim/engine.go",
		old: "case read && p.core != nil && p.core.cur == p:",
		new: "case (read || !read) && p.core != nil && p.core.cur == p:",
		pkg: "./sim", test: "TestPollingThatEndsIsNoLivelock"},
	{name: "sim-livelock-alone", file: "sim/engine.go",
		old: "return e.cancelled() || e.Until == 0 && e.MaxEvents == 0 && e.stalled()",
		new: "return e.cancelled()",
		pkg: "./sim", test: "TestLivelockOfHandWrittenLoops"},
	{name: "store-no-checksum", file: "labkit/store.go",
		old: `if !bytes.Equal(sum[:], b[20:headerLen]) {`,
		new: `if false && !bytes.Equal(sum[:], b[20:headerLen]) {`,
		pkg: "./labkit", test: "TestStoreRejectsBadFiles"},
	{name: "store-trailing-quiet", file: "labkit/store.go",
		old: `case uint64(len(payload)) > n:`,
		new: `case false:`,
		pkg: "./labkit", test: "TestStoreRejectsBadFiles"},
	{name: "ledger-one-missing", file: "labkit/ledger/ledger.go",
		old: `if len(rr.missing) > 0 {`,
		new: `if len(rr.missing) > 1 {`,
		pkg: "./labkit/ledger", test: "TestOneFailedVariantIsNeverJudged"},
	{name: "ledger-pct-base", file: "labkit/ledger/judge.go",
		old: `func pct(a, b float64) float64 { return 100 * (a - b) / b }`,
		new: `func pct(a, b float64) float64 { return 100 * (a - b) / a }`,
		pkg: "./labkit/ledger", test: "TestVerdictsFollowTheNumbers"},
	{name: "json-minus-inf", file: "labkit/export.go",
		old: `math.IsInf(float64(x), 0) {`,
		new: `math.IsInf(float64(x), 1) {`,
		pkg: "./labkit", test: "TestFloatNullsWhatJSONCannotCarry"},
	{name: "sim-deadlock-outnumbered", file: "sim/engine.go",
		old: `quiet > 1000 && e.now > quietUntil {`,
		new: `quiet > 1000 && e.now >= 0*quietUntil {`,
		pkg: "./sim", test: "TestRareTickIsNotOutnumbered"},
	{name: "ledger-noise-ignored", file: "labkit/ledger/judge.go",
		old: `if q.Lo < x && x < q.Hi {`,
		new: `if q.Lo < x && x < q.Lo {`,
		pkg: "./labkit/ledger", test: "TestNoisyVerdictsWaitForTheSeeds"},
	{name: "ledger-one-seed", file: "labkit/ledger/judge.go",
		old: `if q.n < 2 {`,
		new: `if q.n < 1 {`,
		pkg: "./labkit/ledger", test: "TestNoisyVerdictsWaitForTheSeeds"},
	{name: "ledger-unpaired", file: "labkit/ledger/judge.go",
		old: `a.run == b.run && a.variant == b.variant && a.metric == b.metric && res != nil {`,
		new: `false && res != nil {`,
		pkg: "./labkit/ledger", test: "TestNoisyVerdictsWaitForTheSeeds"},
	{name: "ledger-psram-start", file: "labkit/ledger/esp32.go",
		old: "if sw[i] != 2*n[i] {",
		new: "if sw[i] > 2*n[i] {",
		pkg: "./labkit/ledger", test: "TestPSRAMStartNamedWhenEveryHandOffSwitches"},
	{name: "nb-diag-headless", file: "labkit/nbexport/nbexport.go",
		old: "env := []string{SessionEnv + \"=\" + filepath.Join(tmp, \"session.jsonl\"), \"TMPDIR=\" + tmp}",
		new: "env := []string{\"TMPDIR=\" + tmp}",
		pkg: "./labkit/nbexport", test: "TestExportFailingCell"},
	{name: "ledger-rule-means", file: "labkit/ledger/esp32.go",
		old: "for i, q := range below {\n\t\t\tif q.straddles(1) {",
		new: "for i, q := range below {\n\t\t\tif false && q.straddles(1) {",
		pkg: "./labkit/ledger", test: "TestNoisyVerdictsWaitForTheSeeds"},
	{name: "ledger-queued-means", file: "labkit/ledger/arm.go",
		old: "case q16.straddles(1):",
		new: "case false:",
		pkg: "./labkit/ledger", test: "TestNoisyVerdictsWaitForTheSeeds"},
}

// mutationRoot returns the repository root (the tests run in labkit/).
func mutationRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// Every mutant still applies to the code and the table above lists it with
// its file and killing test: the table cannot rot when the code moves.
func TestMutantTable(t *testing.T) {
	root := mutationRoot(t)
	src, err := os.ReadFile("mutation_test.go")
	if err != nil {
		t.Fatal(err)
	}
	header, _, _ := strings.Cut(string(src), "\nimport (")
	rows := map[string]string{}
	for _, l := range strings.Split(header, "\n") {
		if f := strings.Fields(strings.TrimPrefix(l, "//")); len(f) > 3 && strings.Contains(l, ".go:") {
			rows[f[0]] = l
		}
	}
	names := map[string]bool{}
	seen := map[string]map[string]bool{} // test functions by package directory
	for _, m := range mutants {
		if names[m.name] {
			t.Errorf("mutant %s listed twice", m.name)
		}
		names[m.name] = true
		b, err := os.ReadFile(filepath.Join(root, m.file))
		if err != nil {
			t.Errorf("mutant %s: %v", m.name, err)
			continue
		}
		if n := strings.Count(string(b), m.old); n != 1 || m.old == m.new {
			t.Errorf("mutant %s: its text occurs %d times in %s (want once): the code moved; find the place again", m.name, n, m.file)
		}
		row := rows[m.name]
		if !strings.Contains(row, " "+m.file+":") || !strings.HasSuffix(strings.TrimSpace(row), filepath.Base(m.pkg)+" "+m.test) {
			t.Errorf("mutant %s: the table's row %q does not name %s and %s %s", m.name, row, m.file, filepath.Base(m.pkg), m.test)
			continue
		}
		// The function the table names is in the file.
		_, fn, _ := strings.Cut(strings.Fields(row[strings.Index(row, " "+m.file+":"):])[0], ":")
		if i := strings.LastIndex(fn, "."); i >= 0 {
			fn = fn[i+1:]
		}
		if !regexp.MustCompile(`\b` + fn + `\b`).Match(b) {
			t.Errorf("mutant %s: %s has no %s", m.name, m.file, fn)
		}
		// The killing test exists: go test -run of a renamed test runs
		// nothing and passes, and the mutant would seem to survive.
		if !testFuncs(t, seen, filepath.Join(root, m.pkg))[m.test] {
			t.Errorf("mutant %s: no test %s in %s", m.name, m.test, m.pkg)
		}
	}
	if len(rows) != len(mutants) {
		t.Errorf("the table has %d rows, mutants %d", len(rows), len(mutants))
	}
}

// testFuncs returns the names of the Test and Example functions of the
// package in dir, read once per directory (seen keeps them).
func testFuncs(t *testing.T, seen map[string]map[string]bool, dir string) map[string]bool {
	t.Helper()
	if fs, ok := seen[dir]; ok {
		return fs
	}
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	fs := map[string]bool{}
	decl := regexp.MustCompile(`(?m)^func ((?:Test|Example)\w*)\(`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range decl.FindAllSubmatch(b, -1) {
			fs[string(m[1])] = true
		}
	}
	seen[dir] = fs
	return fs
}

// Each mutant, compiled in through -overlay, fails its killing test.
func TestMutants(t *testing.T) {
	if os.Getenv("SYNCLAB_MUTANTS") == "" {
		t.Skip("slow: set SYNCLAB_MUTANTS=1 to re-apply every mutant and run its killing test")
	}
	root := mutationRoot(t)
	env := slices.DeleteFunc(os.Environ(), func(s string) bool { return strings.HasPrefix(s, "SYNCLAB_MUTANTS=") })
	failed := regexp.MustCompile(`(?m)^--- FAIL: (\S+)`)
	suite := os.Getenv("SYNCLAB_MUTANTS") == "suite"
	for _, m := range mutants {
		t.Run(m.name, func(t *testing.T) {
			path := filepath.Join(root, m.file)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			mutated := filepath.Join(dir, filepath.Base(m.file))
			if err := os.WriteFile(mutated, []byte(strings.Replace(string(b), m.old, m.new, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			overlay, _ := json.Marshal(map[string]map[string]string{"Replace": {path: mutated}})
			ov := filepath.Join(dir, "overlay.json")
			if err := os.WriteFile(ov, overlay, 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{"test", "-overlay", ov, "-count=1", "-timeout=10m", "-run", "^" + m.test + "$", m.pkg}
			if suite {
				// The whole suites of the mutated package and of the
				// killing test's package, as make test runs them.
				args = []string{"test", "-overlay", ov, "-count=1", "-timeout=20m", "./" + filepath.Dir(m.file) + "/...", m.pkg}
			}
			cmd := exec.Command("go", args...)
			cmd.Dir, cmd.Env = root, env
			out, err := cmd.CombinedOutput()
			switch {
			case bytes.Contains(out, []byte("[build failed]")) || bytes.Contains(out, []byte("[setup failed]")):
				t.Fatalf("the mutant does not compile:\n%s", out)
			case err == nil:
				t.Fatalf("survived %s %s", m.pkg, m.test)
			}
			var killers []string
			for _, f := range failed.FindAllSubmatch(out, -1) {
				killers = append(killers, string(f[1]))
			}
			t.Logf("killed by %v", killers)
			if !slices.Contains(killers, m.test) {
				t.Fatalf("failed, but not in %s (failing: %v):\n%s", m.test, killers, out)
			}
		})
	}
}
