import { Hono } from "hono";
import type { AppEnv } from "../../app-types";

export const customModelRoutes = new Hono<AppEnv>();
