/*
 * What the settings code (config.c) includes: the settings declarations
 * (config.h), engine_get() (state.h) and the diagnostics (warn.h). Every
 * other file includes the header of each concept it uses.
 */
#ifndef PIANO_INTERNAL_H
#define PIANO_INTERNAL_H

#include "config.h"
#include "state.h"
#include "warn.h"

#endif
