import { Hono } from "hono";
import type { AppEnv } from "../../app-types";

export const memberRoutes = new Hono<AppEnv>();
