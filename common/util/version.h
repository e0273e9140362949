/* What every command and daemon answers to --version (-V).
 *
 * Tools written for Slurm read the release from "slurm X.Y.Z" (the second word) to pick
 * the behaviour they expect; Tessera follows Slurm 22.05's, so it says so first and gives
 * its own version after it: "slurm 22.05.8 (tessera 0.1.0)". */
#ifndef TESSERA_COMMON_VERSION_H
#define TESSERA_COMMON_VERSION_H

/* The Slurm release whose command-line behaviour Tessera follows (Debian 12's). */
#define TESSERA_SLURM_RELEASE "22.05.8"

#define TESSERA_VERSION_LINE "slurm " TESSERA_SLURM_RELEASE " (tessera " TESSERA_VERSION ")"

#endif
