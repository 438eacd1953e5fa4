import { Hono } from "hono";
import type { AppEnv } from "../app-types";

export const healthRoutes = new Hono<AppEnv>();
