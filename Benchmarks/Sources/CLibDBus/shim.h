// libdbus for the C baseline tool (dbus-floor).
#include <dbus/dbus.h>
