/*
 * main.c — the floe command.
 */
#include <stdio.h>
#include <string.h>

#include "floe/common.h"

int floe_cli_avro(int argc, char **argv);

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--version") == 0) {
		printf("floe %s\n", FLOE_VERSION);
		return 0;
	}
	if (argc > 1 && strcmp(argv[1], "avro") == 0)
		return floe_cli_avro(argc - 1, argv + 1);
	fprintf(stderr, "usage: floe <command> ...\n");
	return 2;
}
