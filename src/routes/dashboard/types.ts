import type { Env } from "../../env";
import type { AppVariables } from "../../app-types";
import type { SessionInfo } from "../../auth/session";

/** Dashboard sub-apps see the signed-in session as `session`. */
export interface DashboardEnv {
  Bindings: Env;
  Variables: AppVariables & { session: SessionInfo };
}
