/* The run configuration as a JSON object, for the report's meta.config. */
#ifndef ZB_CONFIG_JSON_H
#define ZB_CONFIG_JSON_H

#include <jansson.h>

#include "cli.h"

/* A new reference; every field of zb_config that a reader needs to repeat
 * the run. */
json_t *zb_config_to_json(const zb_config *cfg);

#endif
