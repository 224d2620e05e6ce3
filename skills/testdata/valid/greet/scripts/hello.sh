#!/usr/bin/env bash
# Greets $1 with the greeting in assets/greeting.txt, read relative to the working directory.
printf '%s, %s!\n' "$(cat assets/greeting.txt)" "$1"
