import { Hono } from "hono";
import type { AppEnv } from "../../app-types";

export const projectRoutes = new Hono<AppEnv>();
