/*
 * main.c — the floe command.
 */
#include <stdio.h>
#include <string.h>

#include "floe/common.h"

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--version") == 0) {
		printf("floe %s\n", FLOE_VERSION);
		return 0;
	}
	fprintf(stderr, "usage: floe <command> ...\n");
	return 2;
}
