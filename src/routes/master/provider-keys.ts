import { Hono } from "hono";
import type { AppEnv } from "../../app-types";

export const providerKeyRoutes = new Hono<AppEnv>();
