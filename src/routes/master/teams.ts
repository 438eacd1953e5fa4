import { Hono } from "hono";
import type { AppEnv } from "../../app-types";

export const teamRoutes = new Hono<AppEnv>();
