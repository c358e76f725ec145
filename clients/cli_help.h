/* cli_help.h - goblin-cli's HELP command (cli_help.c). */
#ifndef GOBLIN_CLI_HELP_H
#define GOBLIN_CLI_HELP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "goblin.h"
#include "goblin/client.h"

/* True when argv is a HELP command (help, help @group, help command). */
bool goblin_cli_is_help(size_t argc, const struct goblin_slice *argv);

/* Prints help for argv[1] (nothing: how to ask) to f, from the server's
 * COMMAND DOCS. Returns 0, or a failure of the connection (negative). */
int goblin_cli_help(goblin_client *c, size_t argc,
                    const struct goblin_slice *argv, FILE *f);

#endif
