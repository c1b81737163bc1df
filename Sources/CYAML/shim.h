// The libyaml surface the simulator's scenario loader uses (Debian's
// libyaml-dev): its parser and document loader, which give every node the
// line and column a scenario error names. Through libyaml rather than a
// Swift YAML package so that the gateway's executable does not link
// Foundation and its ICU data.
#ifndef BLEGATEWAY_CYAML_SHIM_H
#define BLEGATEWAY_CYAML_SHIM_H

#include <yaml.h>

#endif
