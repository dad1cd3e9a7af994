// Package platforms holds SyncLab's concrete platform models, one package
// each: topology, clocks, latencies, power and OS models, every number with
// its source, and each platform's own experiments.
//
// The root package is the contract every platform and labkit share (as
// image is for image/png): Param, a number that carries its provenance and
// source, so that a reader and the sensitivity runs can tell a measured
// number from a guess (param.go); and Experiment, the plain-data definition
// of an experiment with the RunFunc that simulates one run of it
// (experiment.go).
//
// The platforms:
//   - esp32: the ESP32 (dual Xtensa LX6) with an ESP-IDF FreeRTOS SMP kernel
//     model; its experiments reproduce the notify-vs-semaphore article.
//   - rk3399: the Rockchip RK3399 (2 x Cortex-A72 + 4 x Cortex-A53) under
//     Linux 5.10; its experiments reproduce the WFE-vs-WFI article and scale
//     spinlocks over the generic N-core builder.
//   - generic: an arm64 multi-cluster SoC as plain data, built into a sim
//     engine (rk3399 fills it in; NCore makes N-core parts).
//   - linux: the Linux pieces the arm64 platforms share: ticks, NO_HZ idle,
//     spinlock flavours and wait policies.
//
// A new platform is a folder whose package exports Experiments, plus one line
// in labkit/catalog.
package platforms
