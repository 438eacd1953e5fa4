import { Hono } from "hono";
import type { AppEnv } from "../../app-types";

export const organizationRoutes = new Hono<AppEnv>();
